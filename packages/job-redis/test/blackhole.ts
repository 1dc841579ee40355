// A TCP proxy of the tests' own between a client and redis-server. cut()
// makes it a blackhole: it stops forwarding in both directions without
// closing anything (a partition that drops nothing but delivers nothing,
// as TCP does while it retransmits); restore() forwards again, in order.

import { createServer, type Server, Socket } from 'node:net'

export interface Blackhole {
  readonly url: string
  cut(): void
  restore(): void
  close(): Promise<void>
}

interface Pipe {
  readonly client: Socket
  readonly upstream: Socket
  readonly toUpstream: Buffer[]
  readonly toClient: Buffer[]
}

export async function startBlackhole(targetPort: number): Promise<Blackhole> {
  let forwarding = true
  const pipes = new Set<Pipe>()
  const server: Server = createServer((client) => {
    const upstream = new Socket()
    const pipe: Pipe = { client, upstream, toUpstream: [], toClient: [] }
    pipes.add(pipe)
    const end = () => {
      pipes.delete(pipe)
      client.destroy()
      upstream.destroy()
    }
    client.on('data', (data) => {
      if (forwarding) upstream.write(data)
      else pipe.toUpstream.push(data)
    })
    upstream.on('data', (data) => {
      if (forwarding) client.write(data)
      else pipe.toClient.push(data)
    })
    client.on('close', end)
    upstream.on('close', end)
    client.on('error', end)
    upstream.on('error', end)
    upstream.connect(targetPort, '127.0.0.1')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      forwarding = false
    },
    restore() {
      forwarding = true
      for (const pipe of pipes) {
        for (const data of pipe.toUpstream.splice(0)) pipe.upstream.write(data)
        for (const data of pipe.toClient.splice(0)) pipe.client.write(data)
      }
    },
    close() {
      for (const pipe of pipes) {
        pipe.client.destroy()
        pipe.upstream.destroy()
      }
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

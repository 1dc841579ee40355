// A TCP proxy of the tests' own between a client and a server on loopback.
// cut() makes it a blackhole: it stops forwarding in both directions without
// closing anything (a partition that drops nothing but delivers nothing, as
// TCP does while it retransmits); restore() forwards again, in order.

import { createServer, Socket } from 'node:net'

export async function startBlackhole(targetPort) {
  let forwarding = true
  const pipes = new Set()
  const server = createServer((client) => {
    const upstream = new Socket()
    const pipe = { client, upstream, toUpstream: [], toClient: [] }
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
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    port,
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

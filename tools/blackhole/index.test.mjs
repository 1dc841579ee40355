import assert from 'node:assert/strict'
import { createConnection, createServer } from 'node:net'
import { test } from 'node:test'
import { startBlackhole } from './index.mjs'

test('forwards, holds every byte while cut without closing, and delivers them in order once restored', async () => {
  const echo = createServer((socket) => socket.pipe(socket))
  await new Promise((resolve) => echo.listen(0, '127.0.0.1', resolve))
  const proxy = await startBlackhole(echo.address().port)
  const socket = createConnection(proxy.port, '127.0.0.1')
  let received = ''
  socket.on('data', (data) => {
    received += data
  })
  const until = async (text) => {
    for (let i = 0; i < 200 && received !== text; i++) await new Promise((r) => setTimeout(r, 10))
  }
  socket.write('a')
  await until('a')
  assert.equal(received, 'a')
  proxy.cut()
  socket.write('b')
  socket.write('c')
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(received, 'a')
  assert.equal(socket.destroyed, false)
  proxy.restore()
  await until('abc')
  assert.equal(received, 'abc')
  socket.destroy()
  await proxy.close()
  await new Promise((resolve) => echo.close(resolve))
})

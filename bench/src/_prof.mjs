const [file, prefix, nArg] = process.argv.slice(2)
const s = (await import(`./${file}`)).default
const peer = s.peers.find((p) => p.name.startsWith(prefix))
const n = Number(nArg ?? 100000)
for (let r = 0; r < 3; r++) { const t = performance.now(); const res = await peer.run(n); s.verify(peer.name, res, n); console.log(peer.name, n, (performance.now()-t).toFixed(0), 'ms') }

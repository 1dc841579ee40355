import { describe, expect, it } from 'vitest'
import { type LiveLinks, LiveTasks } from '../src/internal/live-tasks.js'

class Node implements LiveLinks<Node> {
  livePrev: Node | undefined = undefined
  liveNext: Node | undefined = undefined
  constructor(readonly id: number) {}
}

describe('LiveTasks', () => {
  it('a removed task links to nothing, so ended tasks never chain to live ones', () => {
    const live = new LiveTasks<Node>()
    const nodes = [1, 2, 3].map((id) => new Node(id))
    for (const node of nodes) live.add(node)
    live.delete(nodes[1]!)
    live.delete(nodes[0]!)
    expect(nodes[0]).toMatchObject({ livePrev: undefined, liveNext: undefined })
    expect(nodes[1]).toMatchObject({ livePrev: undefined, liveNext: undefined })
    expect([...live.values()].map((n) => n.id)).toEqual([3])
  })

  it('a task removed during an iteration keeps its way on until the iteration ends', () => {
    const live = new LiveTasks<Node>()
    const nodes = [1, 2, 3, 4].map((id) => new Node(id))
    for (const node of nodes) live.add(node)
    const seen: number[] = []
    for (const node of live.values()) {
      seen.push(node.id)
      live.delete(node)
      if (node.id === 1) live.delete(nodes[1]!)
    }
    expect(seen).toEqual([1, 3, 4])
    expect(live.size).toBe(0)
    const late = new Node(5)
    live.add(late)
    live.add(new Node(6))
    live.delete(late)
    expect(late.liveNext).toBeUndefined()
  })

  it('an iteration left early (break) stops holding links', () => {
    const live = new LiveTasks<Node>()
    const nodes = [1, 2].map((id) => new Node(id))
    for (const node of nodes) live.add(node)
    for (const _ of live.values()) break
    live.delete(nodes[0]!)
    expect(nodes[0]!.liveNext).toBeUndefined()
  })
})

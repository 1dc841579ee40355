// prelude=declared (type-checked fragments only): the application a fragment
// calls into, as declarations: types without code, so the fragment compiles
// against them (a wrong argument fails) and cannot run. Its one import,
// node:os's `hostname`, is one no fragment imports itself.
import { hostname } from 'node:os'

declare const redis: import('ioredis').Redis
declare const db: import('pg').Pool
declare const ctx: import('@vega/job-core').TaskContext
declare const engine: import('@vega/job-distributed').CoordinationEngine
declare const state: import('@vega/job-devtools-protocol').DevtoolsState
declare const sid: string
declare const id: string
declare const body: { type: string }
declare const ndjsonText: string
declare const log: { info(message: string): void }
declare const orders: { apply(id: string, body: unknown): Promise<void> }
declare function apply(id: string, body: unknown, fence: number): Promise<void>
declare function handle(delivery: import('@vega/job-redis').Delivery): Promise<void>
declare function buildReport(id: number): Promise<string>
declare function saveDoc(id: string, body: string, fence: number): Promise<void>
declare function loadDoc(id: string): Promise<string>

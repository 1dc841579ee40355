/** A loopback TCP proxy that can stop forwarding without closing anything. */
export interface Blackhole {
  /** The proxy's loopback port: connect here instead of to the server. */
  readonly port: number
  /** Stops forwarding in both directions; bytes wait, connections stay open. */
  cut(): void
  /** Forwards again, the waiting bytes first, in order. */
  restore(): void
  /** Closes every connection and the proxy. */
  close(): Promise<void>
}

/** Starts a proxy to `127.0.0.1:<targetPort>`, forwarding until cut. */
export function startBlackhole(targetPort: number): Promise<Blackhole>

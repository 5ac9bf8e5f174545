/**
 * What the fatal line of a failed start (serve.ts) says besides the error: for a port another process
 * holds (`listen EADDRINUSE`, a newcomer's other dev server on 3000), which port and what to do.
 */
export function startFailure(error: unknown): { why?: string; fix?: string } {
  const { code, port, address } = (error ?? {}) as { code?: unknown; port?: number; address?: string };
  if (code !== 'EADDRINUSE') return {};
  return {
    why: `port ${port} on ${address} is in use by another process`,
    fix: `Stop what listens on port ${port}, or start this app on another one: set PORT (under npm start, PORT is the scheduler's and WORKER_PORT the worker's).`,
  };
}

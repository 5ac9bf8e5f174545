/** How the apps' fix names their port setting: PORT, and under npm start WORKER_PORT for the worker. */
const APPS_PORT = "set PORT (under npm start, PORT is the scheduler's and WORKER_PORT the worker's)";

/**
 * What the fatal line of a failed start (serve.ts, examples/reminders) says besides the error: for a port
 * another process holds (`listen EADDRINUSE`, a newcomer's other dev server on 3000), which port and what
 * to do. `setPort` names how this app is given another port (by default, the apps' PORT and WORKER_PORT).
 * Import-free: an app outside the two (the example) imports it by path.
 */
export function startFailure(error: unknown, setPort = APPS_PORT): { why?: string; fix?: string } {
  const { code, port, address } = (error ?? {}) as { code?: unknown; port?: number; address?: string };
  if (code !== 'EADDRINUSE') return {};
  return {
    why: `port ${port} on ${address} is in use by another process`,
    fix: `Stop what listens on port ${port}, or start this app on another one: ${setPort}.`,
  };
}

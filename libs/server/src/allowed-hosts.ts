import { SundialError } from '@sundial/core';
import { type Env, envList } from './env';
import { isIP } from 'node:net';

const ENV = 'SUNDIAL_ALLOWED_HOSTS';

/**
 * The names an app (the scheduler's API, the worker's health and metrics port) answers to besides the ones always allowed: `any` (no check), or exact names
 * and `*.domain` suffixes, lower-case, without a port or a trailing dot.
 */
export type AllowedHosts = 'any' | readonly string[];

const ENTRY_FIX = `List host names only, comma-separated: \`sundial.example.com\`, \`*.example.com\` for every name under a domain, or \`*\` for any name (no scheme, port or path). Unset, ${ENV} allows IP addresses, localhost and single-label names.`;

/** SUNDIAL_ALLOWED_HOSTS from the environment (see parseAllowedHosts). */
export function allowedHostsFromEnv(env: Env, tokenSet: boolean): AllowedHosts {
  return parseAllowedHosts(envList(env, 'SUNDIAL_ALLOWED_HOSTS'), tokenSet);
}

/**
 * SUNDIAL_ALLOWED_HOSTS, read at start (a bad entry stops the process). Unset: none besides the ones
 * always allowed, unless an API token is set (`any`: the token is what guards `/v1` then, and a proxy
 * or Ingress in front may call the scheduler by any name).
 */
export function parseAllowedHosts(entries: string[], tokenSet: boolean): AllowedHosts {
  if (entries.length === 0) return tokenSet ? 'any' : [];
  if (entries.includes('*')) return 'any';
  return entries.map((entry) => {
    const name = entry.toLowerCase().replace(/\.$/, '');
    const bare = name.startsWith('*.') ? name.slice(2) : name;
    const labels = bare.split('.');
    if (!labels.every((label) => /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/.test(label))) {
      throw new SundialError({
        reason: 'invalid',
        field: ENV,
        message: `${ENV} entry ${JSON.stringify(entry)} is not a host name or *.domain`,
        fix: ENTRY_FIX,
      });
    }
    return name;
  });
}

/**
 * Refuses a request whose `Host` names the app (`scheduler`, `worker`) by a name it was not given (DNS
 * rebinding): a web page whose own name the attacker makes resolve to the app's address is same-origin
 * to the browser, so the scheduler's cross-site check lets its writes through and it can read every
 * answer (the worker's metrics too). Its requests
 * carry the attacker's name in `Host`. Always allowed, as no web page's DNS answers for them: an IP
 * address (the kubelet's probes and Prometheus call a pod by its IP), `localhost` and `*.localhost`
 * (loopback by RFC 6761; browsers resolve them themselves), and a single-label name (`scheduler` in
 * Docker Compose, `sundial-scheduler` in its Kubernetes namespace: the local search domains and hosts
 * file resolve it). No `Host` (HTTP/1.0) goes on: every browser sends one. Returns null when it may.
 */
export function hostRefusal(
  host: string | undefined,
  allowed: AllowedHosts,
  app: string,
): SundialError | null {
  if (allowed === 'any' || host === undefined) return null;
  const name = hostname(host);
  if (name === undefined) return refusal(host, 'is not a host name', app);
  if (alwaysAllowed(name) || allowed.some((entry) => matches(name, entry))) return null;
  return refusal(host, `is not a name this ${app} answers to`, app);
}

/** The name of a `Host` header, lower-case, without its port, brackets or trailing dot. */
function hostname(host: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]*)(?::\d*)?$/i.exec(host.trim());
  if (!match) return undefined;
  return match[1]
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function alwaysAllowed(name: string): boolean {
  return isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost') || !name.includes('.');
}

function matches(name: string, entry: string): boolean {
  return entry.startsWith('*.') ? name.endsWith(entry.slice(1)) : name === entry;
}

function refusal(host: string, what: string, app: string): SundialError {
  return new SundialError({
    reason: 'forbidden',
    field: 'host',
    message: `the Host header ${JSON.stringify(host)} ${what} (a web page's own name made to resolve to the ${app}, DNS rebinding, is refused so)`,
    fix: `Call the ${app} by its IP address, localhost or a name in ${ENV}; to call it by this name, add it to ${ENV} (comma-separated, e.g. \`sundial.example.com,*.internal.example.com\`).`,
  });
}

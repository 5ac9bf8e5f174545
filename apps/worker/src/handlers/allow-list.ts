import { refusals } from '@sundial/core';
import { ipLiteral, sameAddress } from './internal-address';

/** One SUNDIAL_HTTP_ALLOW entry: a hostname or IP literal, and a port when the entry names one. */
interface AllowedTarget {
  hostname: string;
  port?: string;
}

/**
 * The hosts the `http` handler may call. `host` allows every port of that host, `host:port` only
 * that port. Hostnames are compared as the URL parser normalizes them (case, IPv6 brackets).
 * An entry that is an IP literal (`127.0.0.1:8080`, `[::1]`) also allows that ADDRESS: only such an
 * entry lets a call reach an internal address (see `allowsAddress`).
 */
export class AllowList {
  private readonly targets: AllowedTarget[];

  constructor(entries: readonly string[]) {
    this.targets = entries.map(parseEntry);
  }

  allows(url: URL): boolean {
    const port = effectivePort(url);
    return this.targets.some(
      (target) => target.hostname === url.hostname && (!target.port || target.port === port),
    );
  }

  /** Whether an entry names `address` itself (an IP literal, any spelling) for `url`'s port. */
  allowsAddress(address: string, url: URL): boolean {
    const port = effectivePort(url);
    return this.targets.some((target) => {
      const literal = ipLiteral(target.hostname);
      return literal !== undefined && sameAddress(literal, address) && (!target.port || target.port === port);
    });
  }
}

/**
 * SUNDIAL_HTTP_ALLOW's entries as given, each read as the AllowList reads it: a bad one is the refusal
 * that stops the worker's start with its environment (worker-config.ts), before the app loads.
 */
export function checkAllowEntries(entries: string[]): string[] {
  entries.forEach(parseEntry);
  return entries;
}

function parseEntry(entry: string): AllowedTarget {
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    throw badEntry(entry, 'is not a host or host:port');
  }
  if (url.pathname !== '/' || url.username || url.search) {
    throw badEntry(entry, 'must be a bare host or host:port, without scheme or path');
  }
  // The URL parser drops a default port (":80"), so read the port from the entry itself.
  const port = /:(\d+)$/.exec(entry)?.[1];
  return { hostname: url.hostname, port: port === undefined ? undefined : String(Number(port)) };
}

/** A SUNDIAL_HTTP_ALLOW entry the worker cannot read: the `invalid` refusal that stops its start. */
function badEntry(entry: string, why: string): Error {
  return refusals.invalid(
    'SUNDIAL_HTTP_ALLOW',
    `SUNDIAL_HTTP_ALLOW: "${entry}" ${why}`,
    'List hosts as host or host:port, comma-separated, e.g. SUNDIAL_HTTP_ALLOW=hooks.example.com:443,api.example.com.',
  );
}

function effectivePort(url: URL): string {
  if (url.port) return url.port;
  return url.protocol === 'https:' ? '443' : '80';
}

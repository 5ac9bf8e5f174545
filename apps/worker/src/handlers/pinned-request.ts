import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { hasHeader } from './request-headers';

/** A URL and the address its host was resolved to and checked at (the only address it is sent to). */
export interface PinnedTarget {
  url: URL;
  address: string;
  family: number;
}

export interface PinnedResponse {
  status: number;
  statusText: string;
  location?: string;
}

interface RequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/**
 * Sends one request to `target.url` over a connection to `target.address`: the connection's lookup
 * answers with that address, so no second resolution can lead elsewhere (DNS rebinding), while the
 * Host header and TLS SNI/certificate check still use the URL's name. No connection pooling: a
 * pooled socket would outlive the check it was made under. The answer's body is never read: the
 * connection closes once the status is in, so a target streaming without end holds no socket.
 */
export function pinnedRequest(target: PinnedTarget, init: RequestInit): Promise<PinnedResponse> {
  const { url, address, family } = target;
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const headers = { ...init.headers };
  if (init.body !== undefined && !hasHeader(headers, 'content-length')) {
    headers['content-length'] = String(Buffer.byteLength(init.body));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      { method: init.method, headers, signal: init.signal, lookup, agent: false },
      (response) => {
        response.destroy();
        resolve({
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? '',
          location: response.headers.location,
        });
      },
    );
    request.on('error', reject);
    request.end(init.body);
  });
}

import { BlockList, isIP } from 'node:net';

/**
 * Addresses a name must not lead to unless an operator allowed them by address: loopback, private,
 * carrier-grade NAT, link-local (cloud metadata), unique-local v6, multicast, reserved, and the v6
 * forms that embed a v4 address (IPv4-compatible, NAT64, 6to4). A v4 range also covers its
 * v4-mapped v6 form (`::ffff:10.0.0.1`): Node's BlockList matches both.
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

/** An IP literal without URL brackets (`[::1]` → `::1`), or undefined for a name. */
export function ipLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

export function isInternalAddress(address: string): boolean {
  return INTERNAL.check(address, familyOf(address));
}

/** Whether two IP literals are the same address, whatever their spelling (`::1`, `0:0::1`, `::ffff:7f00:1`). */
export function sameAddress(a: string, b: string): boolean {
  const one = new BlockList();
  one.addAddress(a, familyOf(a));
  return one.check(b, familyOf(b));
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

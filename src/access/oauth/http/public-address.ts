/**
 * Which IP addresses are on the public internet. A client metadata document is fetched
 * from a URL any caller chooses, so the fetch must never reach this computer, its network
 * or a cloud's metadata service (SSRF): loopback, private, shared (CGNAT), link-local,
 * unspecified, multicast and reserved ranges are refused, and so is an IPv6 address that
 * embeds one of them (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d).
 */

import { BlockList, isIP } from 'node:net';

const NOT_PUBLIC_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const NOT_PUBLIC_V6: readonly [string, number][] = [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated)
  // (no IPv4-mapped ::ffff:0:0/96 rule: BlockList would apply it to every IPv4 address; embeddedIpv4 reads those)
  ['64:ff9b::', 96], // NAT64, when its IPv4 address cannot be read (see embeddedIpv4)
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [network, prefix] of NOT_PUBLIC_V4) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of NOT_PUBLIC_V6) blocked.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  // The URL parser writes every spelling of an IPv6 address in one canonical form.
  const canonical = new URL(`http://[${address}]/`).hostname;
  const match = /^\[(?:::ffff:|64:ff9b::)(?:([0-9a-f]{1,4}):)?([0-9a-f]{1,4})\]$/.exec(canonical);
  if (!match) return undefined;
  const high = Number.parseInt(match[1] ?? '0', 16);
  const low = Number.parseInt(match[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for an IP address on the public internet; false for any other address, or a string that is not one. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  // A zone index (fe80::1%eth0) names an interface of this computer.
  if (family !== 6 || address.includes('%')) return false;
  const inner = embeddedIpv4(address);
  if (inner !== undefined) return isPublicAddress(inner);
  return !blocked.check(address, 'ipv6');
}

import { ipLiteral, isInternalAddress, sameAddress } from './internal-address';

describe('internal addresses (what a name may not lead to unless allowed by address)', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:a00:1::1',
  ])('%s is internal', (address) => expect(isInternalAddress(address)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => expect(isInternalAddress(address)).toBe(false),
  );

  it('reads IP literals with or without URL brackets, and compares spellings', () => {
    expect(ipLiteral('[::1]')).toBe('::1');
    expect(ipLiteral('10.0.0.1')).toBe('10.0.0.1');
    expect(ipLiteral('localhost')).toBeUndefined();
    expect(sameAddress('::1', '0:0::1')).toBe(true);
    expect(sameAddress('127.0.0.1', '::ffff:7f00:1')).toBe(true);
    expect(sameAddress('127.0.0.1', '127.0.0.2')).toBe(false);
  });
});

import { AllowList } from './allow-list';

describe('AllowList (SUNDIAL_HTTP_ALLOW)', () => {
  const allow = new AllowList(['api.example.com', '127.0.0.1:8080', 'Hooks.Example.com:443', '[::1]:9000']);
  const allows = (url: string) => allow.allows(new URL(url));

  it('a bare host allows every port of that host', () => {
    expect(allows('https://api.example.com/x')).toBe(true);
    expect(allows('http://api.example.com:8443/x')).toBe(true);
  });

  it('host:port allows that port only, default ports included', () => {
    expect(allows('http://127.0.0.1:8080/')).toBe(true);
    expect(allows('http://127.0.0.1:8081/')).toBe(false);
    expect(allows('http://127.0.0.1/')).toBe(false);
    expect(allows('https://hooks.example.com/')).toBe(true);
    expect(allows('http://hooks.example.com/')).toBe(false);
  });

  it('compares normalized hostnames, never substrings', () => {
    expect(allows('http://[::1]:9000/')).toBe(true);
    expect(allows('http://api.example.com.evil.test/')).toBe(false);
    expect(allows('http://evil.test/?api.example.com')).toBe(false);
    expect(allows('http://api.example.com@169.254.169.254/')).toBe(false);
    expect(allows('http://169.254.169.254/latest/meta-data')).toBe(false);
  });

  it('refuses entries that are not a host or host:port', () => {
    expect(() => new AllowList(['http://example.com'])).toThrow(/SUNDIAL_HTTP_ALLOW/);
    expect(() => new AllowList(['example.com/path'])).toThrow(/SUNDIAL_HTTP_ALLOW/);
  });
});

describe('AllowList.allowsAddress (internal addresses are allowed by address entries only)', () => {
  const allow = new AllowList(['localhost', '127.0.0.1:8080', '[::1]']);
  const url = (text: string) => new URL(text);

  it('an IP entry allows that address, in any spelling, on its port', () => {
    expect(allow.allowsAddress('127.0.0.1', url('http://localhost:8080/'))).toBe(true);
    expect(allow.allowsAddress('::ffff:127.0.0.1', url('http://localhost:8080/'))).toBe(true);
    expect(allow.allowsAddress('127.0.0.1', url('http://localhost:9090/'))).toBe(false);
    expect(allow.allowsAddress('0:0::1', url('http://localhost:9090/'))).toBe(true);
  });

  it('a name entry allows no address', () => {
    expect(new AllowList(['localhost']).allowsAddress('127.0.0.1', url('http://localhost/'))).toBe(false);
  });
});

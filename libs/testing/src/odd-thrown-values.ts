/**
 * Values a handler or listener may throw or reject with that are not well-behaved errors: each one
 * breaks a naive `error instanceof Error ? error.message : String(error)` somewhere.
 */
export function oddThrownValues(): [string, () => unknown][] {
  const throwing = () => {
    throw new Error('getter boom');
  };
  const everyTrap = new Proxy(
    {},
    {
      get: throwing,
      getPrototypeOf: throwing,
      has: throwing,
      ownKeys: throwing,
      getOwnPropertyDescriptor: throwing,
    },
  );
  return [
    ['null', () => null],
    ['undefined', () => undefined],
    ['a string', () => 'plain string'],
    ['a Symbol', () => Symbol('odd')],
    [
      'an Error whose message getter throws',
      () => Object.defineProperty(new Error('x'), 'message', { get: throwing }),
    ],
    [
      'an Error whose reason getter throws',
      () => Object.defineProperty(new Error('has reason'), 'reason', { get: throwing }),
    ],
    ['an object whose toString throws', () => ({ toString: throwing })],
    [
      'an object with a throwing message getter',
      () => Object.defineProperty({}, 'message', { get: throwing }),
    ],
    ['an object with no prototype', () => Object.create(null) as object],
    ['a Proxy that throws on every trap', () => everyTrap],
  ];
}

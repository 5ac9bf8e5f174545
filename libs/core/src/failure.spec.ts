import { oddThrownValues } from '@sundial/testing/harness';
import { SundialError } from './errors';
import { describeFailure } from './failure';

describe('describeFailure', () => {
  it('keeps an error message and a string reason, and nothing else', () => {
    const error = Object.assign(new Error('no rows'), { reason: 'empty', secret: 'x' });
    expect(describeFailure(error)).toEqual({ message: 'no rows', reason: 'empty' });
    expect(describeFailure(Object.assign(new Error('n'), { reason: 42 }))).toEqual({ message: 'n' });
    const refusal = new SundialError({ reason: 'lost', message: 'gone', fix: 'f' });
    expect(describeFailure(refusal)).toEqual({ message: 'gone', reason: 'lost' });
  });

  it('describes primitives and plain objects by their text or message', () => {
    expect(describeFailure('plain')).toEqual({ message: 'plain' });
    expect(describeFailure(null)).toEqual({ message: 'null' });
    expect(describeFailure(undefined)).toEqual({ message: 'undefined' });
    expect(describeFailure(Symbol('s'))).toEqual({ message: 'Symbol(s)' });
    expect(describeFailure({ message: 'shaped', reason: 'r' })).toEqual({ message: 'shaped', reason: 'r' });
  });

  it.each(oddThrownValues())('never throws for %s, and gives a message string', (_name, make) => {
    const described = describeFailure(make());
    expect(typeof described.message).toBe('string');
    expect(Object.keys(described).filter((field) => field !== 'reason')).toEqual(['message']);
  });

  it('says what it could not describe', () => {
    const [, proxy] = oddThrownValues().find(([name]) => name.startsWith('a Proxy'))!;
    expect(describeFailure(proxy())).toEqual({ message: 'a thrown object that could not be described' });
    expect(describeFailure(Object.create(null))).toEqual({
      message: 'a thrown object that could not be described',
    });
  });
});

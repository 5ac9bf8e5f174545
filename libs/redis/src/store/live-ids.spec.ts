import { ID_CHUNK, idBit, idsOfBitmap } from './live-ids';

describe('live-id bitmaps', () => {
  it('places an id by its seq: bitmap <partition>:<seq div ID_CHUNK>, bit seq mod ID_CHUNK', () => {
    expect(idBit('1p0')).toEqual({ chunk: '0:0', offset: 1 });
    expect(idBit(`${ID_CHUNK + 5}p3`)).toEqual({ chunk: '3:1', offset: 5 });
    expect(idBit('7')).toBeNull();
    expect(idBit('p0')).toBeNull();
    expect(idBit('1p0x')).toBeNull();
  });

  it('reads no bit for an id spelled another way, or whose seq a double cannot hold exactly', () => {
    // each would read the bit of another id: 7p1, 7p1, 9007199254740992p1
    for (const id of ['07p1', '7p01', '9007199254740993p1']) expect(idBit(id)).toBeNull();
    expect(idBit('0p0')).toEqual({ chunk: '0:0', offset: 0 });
    expect(idBit(`${Number.MAX_SAFE_INTEGER}p1`)).not.toBeNull();
  });

  it("lists a bitmap's set bits as ids, high bit of each byte first (as Redis SETBIT numbers them)", () => {
    // bits 1 and 9 of chunk 1 of partition 2
    const bitmap = Buffer.from([0b0100_0000, 0b0100_0000, 0]);
    expect(idsOfBitmap('2:1', bitmap)).toEqual([`${ID_CHUNK + 1}p2`, `${ID_CHUNK + 9}p2`]);
    expect(idsOfBitmap('0:0', Buffer.alloc(4))).toEqual([]);
  });
});

/**
 * What a lost live area says: `waitingIn` reads, from the notebook's metadata, the flows kept for
 * one cell and what each asks (server text, shortened), whatever a received notebook holds.
 */

import { describe, expect, it } from '@jest/globals';

import { waitingIn } from '../src/lost';

const ask = (message: unknown) => ({
  method: 'elicitation/create',
  params: { message }
});

describe('waitingIn', () => {
  it("lists the cell's flows with their questions", () => {
    const metadata = {
      flows: {
        a: { id: 'a', cell_id: 'c1', pending: { q1: ask('Which region?'), q2: ask('Size?') } },
        b: { id: 'b', cell_id: 'c2', pending: { q: ask('Other cell') } }
      }
    };
    expect(waitingIn(metadata, 'c1')).toEqual([{ id: 'a', asks: ['Which region?', 'Size?'] }]);
    expect(waitingIn(metadata, 'c3')).toEqual([]);
  });

  it('keeps long questions short and skips what is not text', () => {
    const metadata = {
      flows: {
        a: { cell_id: 'c1', pending: { q1: ask('x'.repeat(500)), q2: ask(42), q3: 'nonsense' } }
      }
    };
    const [flow] = waitingIn(metadata, 'c1');
    expect(flow.id).toBe('a'); // the key, when the record names no id
    expect(flow.asks).toEqual(['x'.repeat(200) + '…']);
  });

  it('reads a broken metadata block as no flows', () => {
    expect(waitingIn('nonsense', 'c1')).toEqual([]);
    expect(waitingIn({ flows: { a: 'nonsense' } }, 'c1')).toEqual([]);
  });
});

/**
 * What a lost live area says: `waitingIn` reads, from the notebook's metadata, the flows kept for
 * one cell and what each asks (server text, shortened), whatever a received notebook holds;
 * `lostLines` keeps every piece of that text a part of its own, which `lostNode` isolates in a `<bdi>`.
 */

import { describe, expect, it } from '@jest/globals';

import { lostLines, type Part, waitingIn } from '../src/lost';

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

describe('lostLines', () => {
  const RLO = '\u202e'; // right-to-left override: would reverse the words after it
  const LRI = '\u2066';

  it("isolates every piece of the metadata's text from our words", () => {
    const id = `flow${RLO}1`;
    const asks = [`Which ${RLO}region?`, `${LRI}שאלה 2`];
    const lines = lostLines([{ id, asks }]);
    const parts: Part[] = ([] as Part[]).concat(...lines);
    expect(lines[0]).toEqual([
      { text: 'MCP flow ', kind: 'words' },
      { text: id, kind: 'metadata' },
      { text: ' waits for input', kind: 'words' },
      { text: ': ', kind: 'words' },
      { text: asks[0], kind: 'metadata' },
      { text: ' · ', kind: 'words' },
      { text: asks[1], kind: 'metadata' }
    ]);
    // our words and the %mcp line never carry the metadata's text; the line's id is lineWord's ('…' for a control)
    for (const part of parts) {
      if (part.kind !== 'metadata') {
        expect(part.text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]|region|שאלה/);
      }
    }
    expect(lines[1][1]).toEqual({ text: '%mcp resume …', kind: 'code' });
    expect(parts.map(p => p.text).join('')).toBe(
      `MCP flow ${id} waits for input: ${asks[0]} · ${asks[1]}` +
        'Its form was live in a kernel that is gone. To continue, run %mcp resume … (a new kernel needs %load_ext mcp_notebook first).'
    );
  });

  it('says nothing was saved when the metadata keeps no flow for the cell', () => {
    expect(lostLines([])).toEqual([
      [
        {
          text: "This flow's form was live in a kernel that is gone, and nothing of it is saved to continue. Run the cell again to start it afresh.",
          kind: 'words'
        }
      ]
    ]);
  });
});

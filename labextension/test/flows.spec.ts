/**
 * The flows metadata reader: `readFlows` keeps the valid records of
 * `metadata.mcp_notebook.flows`, drops the others with a warning, and never
 * throws, whatever a received notebook holds.
 */

import { describe, expect, it } from '@jest/globals';

import { lineWord, METADATA_KEY, readFlows, waitingCells } from '../src/flows';

describe('readFlows', () => {
  it('keeps every valid record as the kernel wrote it', () => {
    const a = { id: 'a', cell_id: 'c1', server: { name: 'demo' } };
    const b = { id: 'b', cell_id: 'c2' };
    const { flows, warnings } = readFlows({ flows: { a, b } });
    expect(flows).toEqual({ a, b });
    expect(warnings).toEqual([]);
  });

  it('reads no metadata as no flows, without a warning', () => {
    expect(readFlows(undefined)).toEqual({ flows: {}, warnings: [] });
    expect(readFlows({})).toEqual({ flows: {}, warnings: [] });
    expect(readFlows({ flows: {} })).toEqual({ flows: {}, warnings: [] });
  });

  it('drops a record that is not an object, with a warning naming it', () => {
    const good = { id: 'good', cell_id: 'c1' };
    const { flows, warnings } = readFlows({
      flows: { good, text: 'x', none: null, list: [good], count: 3 }
    });
    expect(flows).toEqual({ good });
    expect(warnings).toEqual([
      'saved flow "text" is a string, not an object; ignored',
      'saved flow "none" is null, not an object; ignored',
      'saved flow "list" is an array, not an object; ignored',
      'saved flow "count" is a number, not an object; ignored'
    ]);
  });

  it.each([
    ['a string', 'flows'],
    ['null', null],
    ['an array', [{ id: 'a' }]],
    ['a number', 7],
    ['a boolean', true]
  ])('ignores metadata that is %s, not an object, with a warning', (words, raw) => {
    const { flows, warnings } = readFlows(raw);
    expect(flows).toEqual({});
    expect(warnings).toEqual([
      `notebook metadata "${METADATA_KEY}" is ${words}, not an object; ignored`
    ]);
  });

  it.each([
    ['a string', 'x'],
    ['null', null],
    ['an array', [{ id: 'a', cell_id: 'c1' }]]
  ])('ignores a "flows" that is %s, with a warning', (words, rawFlows) => {
    const { flows, warnings } = readFlows({ flows: rawFlows, other: 1 });
    expect(flows).toEqual({});
    expect(warnings).toEqual([
      `notebook metadata "${METADATA_KEY}.flows" is ${words}, not an object; ignored`
    ]);
  });

  it('returns records it does not change (no copy, no check of their fields)', () => {
    const odd = { id: 5, cell_id: ['not', 'a', 'string'] };
    expect(readFlows({ flows: { odd } }).flows.odd).toBe(odd);
  });
});

describe('waitingCells', () => {
  it('maps each cell to the ids of the valid flows it started', () => {
    const byCell = waitingCells({
      flows: {
        a: { id: 'a', cell_id: 'c1' },
        b: { id: 'b', cell_id: 'c1' },
        c: { cell_id: 'c2' }, // no id: the key stands in
        d: { id: 'd' }, // no cell: no marker
        e: 'broken'
      }
    });
    expect(byCell).toEqual(
      new Map([
        ['c1', ['a', 'b']],
        ['c2', ['c']]
      ])
    );
  });
});

describe('lineWord', () => {
  // the same words the kernel's core.text.mcp_line writes (tests/security/test_suggested_lines.py)
  it.each([
    ['abc', 'abc'],
    ['a b', "'a b'"],
    ['x{[__import__("os").system("touch F")]and""}', `'x{[__import__("os").system("touch F")]and""}'`],
    ["it's", `'it'"'"'s'`],
    ['a?', "'a?'"],
    ['x\u2028y', '…'],
    ['x\ny', '…'],
    ['\u202eevil', '…'],
    ['x\u00a0y', '…'],
    ['--trust=sha256:0123456789abcdef', '…'],
    ['--accept-defaults', '…'],
    ['-', '…'],
    ['é', 'é']
  ])('writes %j as %s', (text, word) => {
    expect(lineWord(text)).toBe(word);
  });
});

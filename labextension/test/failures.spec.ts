/**
 * Failures shown to the user: one dialog per kind of failure per page, so a
 * notebook with many outputs (or a hostile App) cannot stack dialogs.
 */

import { describe, expect, it, jest } from '@jest/globals';

// (`mock…`: jest lets a hoisted `jest.mock` factory refer to it; the real
// module is never loaded)
const mockShowErrorMessage = jest.fn(
  async (_title: string, _body: string) => undefined
);

jest.mock('@jupyterlab/apputils', () => ({
  showErrorMessage: mockShowErrorMessage
}));

import { reasonText, showFailure } from '../src/failures';

describe('showFailure', () => {
  it('shows one dialog per kind, the first failure of that kind', () => {
    showFailure('app', 'MCP App could not open', 'first');
    showFailure('app', 'MCP App could not open', 'second');
    showFailure('report', 'MCP flow output not written', 'third');
    showFailure('app', 'MCP App could not open', 'fourth');
    expect(mockShowErrorMessage.mock.calls.map(([title]) => title)).toEqual([
      'MCP App could not open',
      'MCP flow output not written'
    ]);
    expect(mockShowErrorMessage.mock.calls[0][1]).toMatch(
      /^first \(Further failures/
    );
  });

  it('says a rejection reason in words', () => {
    expect(reasonText(new Error('the kernel did not answer in time'))).toBe(
      'the kernel did not answer in time'
    );
    expect(reasonText('gone')).toBe('gone');
  });
});

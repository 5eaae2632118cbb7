/**
 * Failures the user should hear of, not only the browser console.
 *
 * The places that call this keep their `console.warn` for diagnostics; this
 * adds an error dialog (`showErrorMessage`), at most one per kind of failure
 * per page load, so a notebook with many outputs (or a hostile App) cannot
 * stack dialogs.  Later failures of that kind show only where they happened
 * (the output's note) and in the console.
 */

import { showErrorMessage } from '@jupyterlab/apputils';

/** The kinds of failure that get a dialog. */
export type FailureKind =
  /** The notebook refused to store (or drop) a waiting flow's record. */
  | 'flow-metadata'
  /** A flow's report or live area could not be written into its cell. */
  | 'report'
  /** An App could not be opened or started (not a kernel's own answer, which its output shows). */
  | 'app';

const shown = new Set<FailureKind>();

/** What the dialog adds about the next failures of the same kind. */
const ONCE_NOTE =
  ' (Further failures of this kind on this page go only to the browser console.)';

/** Tell the user once per page and kind; `message` is plain text. */
export function showFailure(
  kind: FailureKind,
  title: string,
  message: string
): void {
  if (shown.has(kind)) {
    return;
  }
  shown.add(kind);
  void showErrorMessage(title, message + ONCE_NOTE).catch(reason =>
    console.warn('mcp-notebook: could not show an error dialog', reason)
  );
}

export { reasonText } from './common';

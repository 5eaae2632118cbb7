/**
 * What every part of the extension shares: JSON shapes, the notebook context
 * type and the form class.  Written once here; nothing in this file touches
 * the page or a kernel, so the unit specs load it as is.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';

/** A JSON object as it comes from the kernel or the notebook metadata (values unchecked). */
export type JSONObject = { [key: string]: unknown };

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is JSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` if it is a string, else ''. */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** What `value` is, in words, for a warning ("null", "an array", "a number"). */
export function describe(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  return `a ${typeof value}`;
}

/**
 * Everything the extension needs from a notebook document.  The context is
 * shared by all views of one notebook, so it is the unit we track.
 */
export type Context = NotebookPanel['context'];

/**
 * CSS class the kernel puts on the root widget of a form or panel (and the
 * App renderer on its output): what the stale marking looks for.
 */
export const FORM_CLASS = 'mcp-notebook-form';

/** The words of a rejection reason. */
export function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/** The error an App's request fails with, and how long one waits (no JupyterLab types: the widget front end uses them too). */

/**
 * How long to wait for the kernel.  A tool call from an App may ask the user
 * something in the cell, and opening an App may need a sign-in.
 */
export const REQUEST_TIMEOUT_MS = 15 * 60 * 1000;

/**
 * Error carrying a JSON-RPC code (the bridge sends it to the App as is).
 * `kind` is `gone` when the kernel went away (a restart, a closed comm: the
 * stale banner says so), else `failed`.
 */
export class AppError extends Error {
  constructor(
    message: string,
    readonly code: number = -32603,
    readonly kind: 'failed' | 'gone' = 'failed'
  ) {
    super(message);
  }
}

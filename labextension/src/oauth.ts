/**
 * OAuth sign-in relay: from the callback page to the kernel that waits.
 *
 * A kernel that signs in to a remote MCP server sends the browser to an
 * authorization server, which redirects it to the Jupyter server's
 * `{base_url}mcp-notebook/oauth/callback` (the server extension,
 * `mcp_notebook/auth/server_extension.py`).  The kernel may run elsewhere and
 * cannot reach that server, so the code comes back through this page:
 *
 * - the kernel says `{op: "oauth_wait", state}` on the notebook's comm: this
 *   relay remembers state -> comm;
 * - the callback page (same origin) posts `{state, code, iss, error,
 *   error_description}` on `BroadcastChannel("mcp-notebook-oauth")`; a message
 *   whose state is awaited goes to that one comm as `{op: "oauth", ...}`, and
 *   the state is forgotten;
 * - in case the broadcast is lost (the callback opened in another browser
 *   window, this page reloaded), the relay polls
 *   `{base_url}mcp-notebook/oauth/result?state=...` every 2 s while a state is
 *   awaited, for at most 15 minutes, and forwards a 200 answer the same way.
 *
 * Codes and states are never logged, stored in the notebook or put in the DOM.
 */

import { Kernel, ServerConnection } from '@jupyterlab/services';

import { isObject, JSONObject } from './common';

/** The channel the callback page posts on. */
export const OAUTH_CHANNEL = 'mcp-notebook-oauth';

/** The server extension's paths, relative to the server's base URL. */
export const CALLBACK_PATH = 'mcp-notebook/oauth/callback';
export const RESULT_PATH = 'mcp-notebook/oauth/result';

/** How often the fallback polls, and for how long a state is awaited. */
export const POLL_INTERVAL_MS = 2000;
export const WAIT_LIMIT_MS = 15 * 60 * 1000;

const STATE_PATTERN = /^[A-Za-z0-9_-]{8,256}$/;
const FIELDS = ['code', 'iss', 'error', 'error_description'] as const;

/** Whether `value` is a state the server extension accepts. */
export function isOAuthState(value: unknown): value is string {
  return typeof value === 'string' && STATE_PATTERN.test(value);
}

/**
 * The absolute base URL of the Jupyter server as this browser sees it,
 * ending in "/": what the kernel builds its redirect URI from.
 */
export function pageUrl(settings: ServerConnection.ISettings): string {
  const href = new URL(settings.baseUrl, window.location.href).href;
  return href.endsWith('/') ? href : `${href}/`;
}

/**
 * The message for the kernel: only the known fields, each a string or null.
 */
export function oauthMessage(state: string, raw: JSONObject): JSONObject {
  const message: JSONObject = { op: 'oauth', state };
  for (const name of FIELDS) {
    const value = raw[name];
    message[name] = typeof value === 'string' ? value : null;
  }
  return message;
}

/** How the relay talks to a comm (the extension's guarded `comm.send`). */
export type Send = (comm: Kernel.IComm, data: JSONObject) => void;

interface IWait {
  comm: Kernel.IComm;
  settings: ServerConnection.ISettings;
  until: number;
  polling: boolean;
}

/**
 * One per page: the states kernels wait for, the channel, the fallback poll.
 */
export class OAuthRelay {
  constructor(send: Send) {
    this._send = send;
    try {
      this._channel = new BroadcastChannel(OAUTH_CHANNEL);
      this._channel.onmessage = (event: MessageEvent) =>
        this._onBroadcast(event.data);
    } catch {
      this._channel = null; // no BroadcastChannel: the poll still works
    }
  }

  /** The number of states awaited (tests). */
  get size(): number {
    return this._waits.size;
  }

  /**
   * Handle `oauth_wait` / `oauth_cancel` from a kernel on `comm`; returns the
   * reply (`ack`, or `error` for a bad state).
   */
  handle(
    comm: Kernel.IComm,
    settings: ServerConnection.ISettings,
    data: JSONObject
  ): JSONObject {
    const op = data.op;
    const state = data.state;
    let reply: JSONObject;
    if (!isOAuthState(state)) {
      reply = {
        op: 'error',
        for: op,
        id: null,
        message: `${op} needs a "state" of 8 to 256 letters, digits, "-" or "_"`
      };
    } else {
      if (op === 'oauth_wait') {
        this._waits.set(state, {
          comm,
          settings,
          until: Date.now() + WAIT_LIMIT_MS,
          polling: false
        });
      } else if (this._waits.get(state)?.comm === comm) {
        this._waits.delete(state);
      }
      this._schedule();
      reply = { op: 'ack', id: null, state };
    }
    if (data.req !== undefined) {
      reply.req = data.req;
    }
    return reply;
  }

  /** Forget every state awaited on `comm` (closed, or its kernel gone). */
  forgetComm(comm: Kernel.IComm): void {
    for (const [state, wait] of Array.from(this._waits)) {
      if (wait.comm === comm) {
        this._waits.delete(state);
      }
    }
    this._schedule();
  }

  dispose(): void {
    this._waits.clear();
    this._schedule();
    this._channel?.close();
    this._channel = null;
  }

  private _onBroadcast(data: unknown): void {
    if (!isObject(data) || typeof data.state !== 'string') {
      return;
    }
    const wait = this._waits.get(data.state);
    if (!wait) {
      return;
    }
    this._forward(data.state, wait, data);
    // The server keeps its copy for the poll; it is not needed any more.
    void this._fetch(data.state, wait.settings);
  }

  private _forward(state: string, wait: IWait, raw: JSONObject): void {
    if (this._waits.get(state) !== wait) {
      return; // answered, cancelled or replaced meanwhile
    }
    this._waits.delete(state);
    this._schedule();
    this._send(wait.comm, oauthMessage(state, raw));
  }

  /** Poll while anything is awaited, stop when nothing is. */
  private _schedule(): void {
    if (this._waits.size && this._timer === null) {
      this._timer = window.setInterval(() => this._poll(), POLL_INTERVAL_MS);
    } else if (!this._waits.size && this._timer !== null) {
      window.clearInterval(this._timer);
      this._timer = null;
    }
  }

  private _poll(): void {
    const now = Date.now();
    for (const [state, wait] of Array.from(this._waits)) {
      if (now > wait.until || wait.comm.isDisposed) {
        this._waits.delete(state);
        continue;
      }
      if (wait.polling) {
        continue;
      }
      wait.polling = true;
      void this._fetch(state, wait.settings).then(answer => {
        wait.polling = false;
        if (answer) {
          this._forward(state, wait, answer);
        }
      });
    }
    this._schedule();
  }

  /** The server's entry for `state` (taken: it answers once), or null. */
  private async _fetch(
    state: string,
    settings: ServerConnection.ISettings
  ): Promise<JSONObject | null> {
    const url = `${pageUrl(settings)}${RESULT_PATH}?state=${encodeURIComponent(state)}`;
    try {
      const response = await ServerConnection.makeRequest(
        url,
        { method: 'GET', cache: 'no-store' },
        settings
      );
      if (response.status !== 200) {
        return null;
      }
      const body: unknown = await response.json();
      return isObject(body) ? body : null;
    } catch {
      return null; // offline, logged out, server restarting: try again on the next tick
    }
  }

  private _send: Send;
  private _channel: BroadcastChannel | null;
  private _waits = new Map<string, IWait>();
  private _timer: number | null = null;
}

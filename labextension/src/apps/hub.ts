/**
 * The hub: an App output's requests over the notebook's comm, the kernel's
 * replies, and reloads.  One per page.
 *
 * Comm messages (`req` is chosen by this page and echoed in replies):
 *   page -> kernel                                   kernel -> page
 *   {op: "app_open", app, req}                       {op: "app_resource", app, req, html, csp,
 *                                                      permissions, prefers_border, tool_input,
 *                                                      tool_result}
 *                                                    or {op: "app_error", app, req, kind, message}
 *                                                      (kind "not_live" | "failed")
 *   {op: "app_activate", app, req, server, tool,     as for app_open
 *    uri, tool_input, tool_result}   (on a click)
 *   {op: "app_request", app, req, method, params}    {op: "app_reply", app, req, result}
 *     (method "tools/call" | "resources/read")       or {op: "app_reply", app, req, error: {code, message}}
 *   {op: "app_notify", app, method, params}          (no reply)
 *     (method "ui/message" | "ui/update-model-context" | "notifications/message")
 *                                                    {op: "app_reload", server}  (unsolicited)
 */

import { Kernel } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { JSONObject } from '../common';
import { AppError, REQUEST_TIMEOUT_MS } from './errors';

export { AppError, REQUEST_TIMEOUT_MS };


interface IPending {
  comm: Kernel.IComm;
  key: object;
  app: string;
  resolve: (reply: JSONObject) => void;
  reject: (reason: AppError) => void;
  timer: number;
}

/** What a renderer needs to know of the notebook it is in. */
export interface IAppHost {
  /** The key of the notebook document (its context), or null outside one. */
  key: object;
  /** The open comm of the notebook's kernel, or null. */
  comm(): Kernel.IComm | null;
}

/** Finds the notebook of a rendered output (set up by the plugin). */
export type AppHostLocator = (widget: Widget) => IAppHost | null;

/** What the hub tells a rendered App output (`AppOutput` in output.ts). */
export interface IAppRenderer {
  /** The kernel says the App's server was redefined. */
  reloadIfServer(server: string): void;
  /** A comm opened in this notebook. */
  commAvailable(): void;
  /** The kernel restarted or stopped: the App can no longer reach it. */
  kernelGone(): void;
}

/**
 * One per page: sends App requests on the comms, routes the kernel's
 * replies, and knows the renderers of every notebook (for reloads and for a
 * comm that opens later).
 */
export class AppHub {
  constructor(locate: AppHostLocator) {
    this.locate = locate;
  }

  readonly locate: AppHostLocator;

  /** Send a request and wait for its reply (app_resource, app_error, app_reply). */
  request(
    key: object,
    comm: Kernel.IComm,
    body: JSONObject
  ): Promise<JSONObject> {
    const req = this.nextReq++;
    const app = String(body.app);
    return new Promise<JSONObject>((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this.pending.delete(req);
        reject(new AppError('the kernel did not answer in time'));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(req, { comm, key, app, resolve, reject, timer });
      if (!this.send(comm, { ...body, req })) {
        window.clearTimeout(timer);
        this.pending.delete(req);
        reject(new AppError('could not send to the kernel'));
      }
    });
  }

  /** Send a message that gets no reply. */
  send(comm: Kernel.IComm, body: JSONObject): boolean {
    try {
      if (comm.isDisposed) {
        return false;
      }
      comm.send(body as any);
      return true;
    } catch (reason) {
      console.warn('mcp-notebook: could not send to the kernel', reason);
      return false;
    }
  }

  /** A message with an `app_*` op from a kernel. */
  handle(key: object, comm: Kernel.IComm, data: JSONObject): void {
    if (data.op === 'app_reload') {
      const server = data.server;
      if (typeof server !== 'string') {
        return;
      }
      for (const output of this.outputsOf(key)) {
        output.reloadIfServer(server);
      }
      return;
    }
    const req = data.req;
    if (typeof req !== 'number') {
      return;
    }
    const pending = this.pending.get(req);
    // Another page on the same kernel sees our replies and we see theirs:
    // requests are matched by number, comm and App.
    if (!pending || pending.comm !== comm || pending.app !== data.app) {
      return;
    }
    this.pending.delete(req);
    window.clearTimeout(pending.timer);
    pending.resolve(data);
  }

  /** A comm of this notebook opened: renderers without one may ask now. */
  commOpened(key: object): void {
    for (const output of this.outputsOf(key)) {
      output.commAvailable();
    }
  }

  /** The notebook's kernel restarted, stopped or was replaced. */
  kernelGone(key: object): void {
    for (const [req, pending] of Array.from(this.pending)) {
      if (pending.key === key) {
        this.pending.delete(req);
        window.clearTimeout(pending.timer);
        pending.reject(new AppError('the kernel is gone', undefined, 'gone'));
      }
    }
    for (const output of this.outputsOf(key)) {
      output.kernelGone();
    }
  }

  /** A comm closed (by the kernel): its requests get no reply. */
  commClosed(comm: Kernel.IComm): void {
    for (const [req, pending] of Array.from(this.pending)) {
      if (pending.comm === comm) {
        this.pending.delete(req);
        window.clearTimeout(pending.timer);
        pending.reject(
          new AppError('the kernel closed the connection', undefined, 'gone')
        );
      }
    }
  }

  register(key: object, output: IAppRenderer): void {
    let set = this.outputs.get(key);
    if (!set) {
      set = new Set();
      this.outputs.set(key, set);
    }
    set.add(output);
  }

  unregister(key: object, output: IAppRenderer): void {
    this.outputs.get(key)?.delete(output);
  }

  private outputsOf(key: object): IAppRenderer[] {
    return Array.from(this.outputs.get(key) ?? []);
  }

  // Random start: two pages on one kernel see each other's replies.
  private nextReq = 1 + Math.floor(Math.random() * 2 ** 40);
  private pending = new Map<number, IPending>();
  private outputs = new WeakMap<object, Set<IAppRenderer>>();
}

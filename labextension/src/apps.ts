/**
 * MCP Apps (`io.modelcontextprotocol/ui`) in notebook outputs.
 *
 * The kernel displays, for a tool call whose tool has an App, an output
 * bundle of MIME type `application/vnd.mcp-notebook.app+json`:
 *
 *     {v: 1, app: ID, server, tool, uri, tool_input, tool_result}
 *
 * next to `text/plain` (the tool's text result, the fallback).  The renderer
 * here asks the notebook's kernel for the App over the `mcp_notebook` comm
 * and shows it in a sandboxed iframe, talking to it with ext-apps' AppBridge.
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
 *
 * Isolation: the App runs in two nested frames, both
 * `sandbox="allow-scripts allow-forms"` without `allow-same-origin`, so it
 * runs in an opaque origin: it cannot reach JupyterLab's origin, cookies,
 * storage or the contents API.
 *
 * - The outer frame (`.mcp-notebook-app-frame`) holds only our guard
 *   document (`buildGuardDocument`): its CSP (`buildGuardCsp`: the App's
 *   own, which the App's `srcdoc` inherits) has `frame-src 'none'`, which
 *   Chromium applies to every navigation of the inner frame, also those the
 *   App starts itself (`location.href = …`, `<meta http-equiv=refresh>`),
 *   which the App's own CSP does not govern.  The guard relays the App's
 *   postMessage traffic both ways, and removes the App's frame if it ever
 *   loads a second document anyway.  (The Navigation API's `navigate` event
 *   cannot do this: the HTML spec disables its events in opaque origins, and
 *   Chromium fires none there.)
 * - The inner frame's document is a `srcdoc` that starts with a
 *   Content-Security-Policy `<meta>` built from the domains the App declared
 *   (checked by the kernel and again here), then a prelude script
 *   (`buildPrelude`) that runs before the App's own code: it removes
 *   `RTCPeerConnection` (Chromium ignores CSP's `webrtc 'block'`) and, for an
 *   App that declares no frame domains, every nested frame it adds.
 *
 * Nothing from the output data or the kernel is ever parsed as HTML in this
 * page: only text nodes and attributes.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Kernel } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';
import {
  AppBridge,
  buildAllowAttribute,
  PostMessageTransport
} from '@modelcontextprotocol/ext-apps/app-bridge';
import type {
  McpUiHostContext,
  McpUiResourceCsp,
  McpUiResourcePermissions
} from '@modelcontextprotocol/ext-apps/app-bridge';

/** MIME type of an App output. */
export const APP_MIME = 'application/vnd.mcp-notebook.app+json';

/** Renderer rank: above HTML (50), markdown (60) and text/plain (120). */
export const APP_RANK = 40;

/** CSS classes of the rendered output. */
export const APP_CLASS = 'mcp-notebook-app';
export const APP_STATUS_CLASS = 'mcp-notebook-app-status';
export const APP_NOTE_CLASS = 'mcp-notebook-app-note';
export const APP_FRAME_CLASS = 'mcp-notebook-app-frame';
export const APP_FALLBACK_CLASS = 'mcp-notebook-app-fallback';
export const APP_FALLBACK_TEXT_CLASS = 'mcp-notebook-app-fallback-text';
export const APP_ACTIVATE_CLASS = 'mcp-notebook-app-activate';
export const APP_BORDER_CLASS = 'mcp-notebook-app-border';
export const APP_LINK_HOST_CLASS = 'mcp-notebook-app-link-host';
export const APP_RESULT_CLASS = 'mcp-notebook-app-result';
export const APP_RESULT_TEXT_CLASS = 'mcp-notebook-app-result-text';

/** The key of the guard's control messages (never JSON-RPC: the bridge's transport ignores them). */
const GUARD_KEY = 'mcpNotebookGuard';

/** What the cell says when an activated output's saved data was not used. */
export const UNSIGNED_NOTE =
  'The saved tool input and result of this output were not given to the App: the output was not signed by you ' +
  '(it comes from a notebook someone else saved, or was edited). The App started without them.';

/** What the cell says when the guard removed the App (by the reason the guard gives). */
const LEFT_NOTES: { [why: string]: string } = {
  navigated:
    'The App was removed: it loaded another page in its frame, which this notebook does not allow.',
  frame:
    'The App was removed: it added a nested frame it did not declare, which this notebook does not allow.'
};

/** Host identity told to the App. */
const HOST_INFO = { name: 'mcp-notebook', version: '0.1.0' };

/**
 * The frame's height bounds and its height before the App says its size:
 * small, so an App that never says its size (or says a line's height) leaves
 * no large empty frame; the App's `ui/notifications/size-changed` sets it.
 */
const MIN_HEIGHT = 20;
const MAX_HEIGHT = 2000;
const INITIAL_HEIGHT = 40;

/**
 * How long an App may take to send `ui/notifications/initialized` before the
 * output says it did not start and opens the tool's text result.
 */
const INIT_TIMEOUT_MS = 10_000;

/** The longest error message of an App's page that the output repeats. */
const MAX_ERROR_CHARS = 300;

/**
 * How long to wait for the kernel.  A tool call from an App may ask the user
 * something in the cell, and opening an App may need a sign-in.
 */
const REQUEST_TIMEOUT_MS = 15 * 60 * 1000;

/** Limits on what the page accepts as CSP domains. */
const MAX_DOMAINS = 64;
const MAX_DOMAIN_LENGTH = 260;

const NO_COMM_NOTE =
  'No mcp-notebook connection to the kernel: run %load_ext mcp_notebook in this notebook to activate the App.';

/** The form class from index.ts (stale marking); kept here to avoid a cycle. */
const FORM_CLASS = 'mcp-notebook-form';

type JSONObject = { [key: string]: unknown };

function isObject(value: unknown): value is JSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The output data, checked. */
export interface IAppData {
  app: string;
  server: string;
  tool: string;
  uri: string;
  toolInput: JSONObject;
  toolResult: JSONObject | null;
  /** The kernel's signature of the output (`null`: unsigned; the kernel decides what it is worth). */
  sig: string | null;
}

/** Read the MIME data; `null` when it is not a usable App output. */
export function readAppData(raw: unknown): IAppData | null {
  if (!isObject(raw)) {
    return null;
  }
  const app = raw.app;
  if (typeof app !== 'string' || !/^[0-9a-f]{16}$/.test(app)) {
    return null;
  }
  return {
    app,
    server: str(raw.server),
    tool: str(raw.tool),
    uri: str(raw.uri),
    toolInput: isObject(raw.tool_input) ? raw.tool_input : {},
    toolResult: isObject(raw.tool_result) ? raw.tool_result : null,
    sig: typeof raw.sig === 'string' ? raw.sig : null
  };
}

// ---------------------------------------------------------------------------
// Content Security Policy
// ---------------------------------------------------------------------------

/**
 * An origin the page lets into the App's CSP: `https://` or `wss://` with a
 * host made of host characters (a leading `*.` allowed) and an optional
 * port, or `http://localhost` / `http://127.0.0.1` with an optional port.
 * No paths, spaces, quotes or semicolons.
 */
const ORIGIN_RE =
  /^(?:(?:https|wss):\/\/(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|http:\/\/(?:localhost|127\.0\.0\.1))(?::[0-9]{1,5})?$/;

/** Keep the valid origins of a declared domain list (deduplicated). */
export function checkedDomains(raw: unknown): string[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  const kept: string[] = [];
  for (const item of raw) {
    if (kept.length >= MAX_DOMAINS) {
      break;
    }
    if (
      typeof item !== 'string' ||
      item.length > MAX_DOMAIN_LENGTH ||
      !ORIGIN_RE.test(item)
    ) {
      if (item !== undefined) {
        console.warn('mcp-notebook: App CSP domain dropped', String(item));
      }
      continue;
    }
    const origin = item.toLowerCase();
    if (!kept.includes(origin)) {
      kept.push(origin);
    }
  }
  return kept;
}

/** The `csp` object of a reply, every list checked. */
export function checkedCsp(raw: unknown): Required<McpUiResourceCsp> {
  const csp = isObject(raw) ? raw : {};
  return {
    connectDomains: checkedDomains(csp.connectDomains),
    resourceDomains: checkedDomains(csp.resourceDomains),
    frameDomains: checkedDomains(csp.frameDomains),
    baseUriDomains: checkedDomains(csp.baseUriDomains)
  };
}

/**
 * The policy of the MCP Apps spec for these (checked) domains.
 *
 * Besides the declared origins it allows only the local schemes `data:` and
 * `blob:` (what ext-apps' reference host allows too, less its `'self'`,
 * `'unsafe-eval'` and undeclared worker origins): a `data:` or `blob:` script
 * or style is text the App already holds, no more than the inline code it may
 * run anyway, and fetches nothing.  `worker-src blob:` lets an App start a
 * worker from code it made (PDF.js in `@modelcontextprotocol/server-pdf`); a
 * worker from a `blob:` URL runs under this same policy (CSP3: a local-scheme
 * worker inherits its creator's), so it reaches no more than the App does.
 * (In Chromium a *module* worker never starts in the App's opaque origin;
 * PDF.js then runs its worker code in the page, imported from a `data:` URL.)
 */
export function buildCsp(csp: Required<McpUiResourceCsp>): string {
  const list = (domains: string[]) =>
    domains.length ? ' ' + domains.join(' ') : '';
  const orNone = (domains: string[]) =>
    domains.length ? domains.join(' ') : "'none'";
  const res = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' data: blob:${res}`,
    `style-src 'unsafe-inline' data: blob:${res}`,
    `img-src data: blob:${res}`,
    `font-src data: blob:${res}`,
    `media-src data: blob:${res}`,
    'worker-src blob:',
    `connect-src ${orNone(csp.connectDomains)}`,
    `frame-src ${orNone(csp.frameDomains)}`,
    `base-uri ${orNone(csp.baseUriDomains)}`,
    "object-src 'none'",
    "form-action 'none'"
  ].join('; ');
}

/**
 * The script that runs in the App's document before the App's own code.
 *
 * - It deletes `RTCPeerConnection` (and its prefixed name): WebRTC reaches
 *   any STUN/TURN address whatever `connect-src` says, and Chromium does not
 *   implement CSP's `webrtc 'block'`.  A nested frame would bring a fresh
 *   copy (an `<iframe srcdoc>` inherits the CSP, not the deletion), so:
 * - without declared frame domains, every frame element the App adds (also
 *   in shadow roots it attaches) is removed when the DOM changes, before its
 *   document loads; if a frame exists anyway (`window.length`, checked then
 *   and every 100 ms: e.g. in a declarative closed shadow root), it asks the
 *   guard to remove the whole App.
 * - It tells the guard the first uncaught error of the page (`error`, with
 *   its message cut to MAX_ERROR_CHARS): an App that throws before it
 *   initialized is said to have failed at once, not after INIT_TIMEOUT_MS.
 *   (Only the App's own output believes it; a lying App harms only itself.)
 *
 * Everything it uses later is taken before the App runs, so an App that
 * replaces `Element.prototype.remove` or the like does not disarm it.
 */
export function buildPrelude(csp: Required<McpUiResourceCsp>): string {
  const frames = csp.frameDomains.length === 0;
  return (
    '<script>(() => {' +
    "for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection']) { try { delete window[name]; } catch (e) { /* kept */ } }" +
    'const host = parent, Text = String; let erred = false;' +
    "addEventListener('error', e => { if (erred) return; erred = true; try { host.postMessage({" +
    GUARD_KEY +
    ": 'error', message: Text(e && e.message || 'error').slice(0, " +
    MAX_ERROR_CHARS +
    ")}, '*'); } catch (x) { /* gone */ } });" +
    (frames
      ? 'const remove = Element.prototype.remove, all = Document.prototype.querySelectorAll, allIn = DocumentFragment.prototype.querySelectorAll;' +
        "const count = Object.getOwnPropertyDescriptor(NodeList.prototype, 'length').get;" +
        "const frameCount = (Object.getOwnPropertyDescriptor(window, 'length') || Object.getOwnPropertyDescriptor(Window.prototype, 'length')).get;" +
        'const up = parent, Observer = MutationObserver, observe = MutationObserver.prototype.observe, attach = Element.prototype.attachShadow;' +
        "const tags = 'iframe,frame,frameset,object,embed,fencedframe,portal', roots = [document];" +
        'let told = false;' +
        'const sweep = () => { for (let r = 0; r < roots.length; r++) { const root = roots[r], found = r === 0 ? all.call(root, tags) : allIn.call(root, tags);' +
        ' for (let i = count.call(found) - 1; i >= 0; i--) remove.call(found[i]); }' +
        ' if (!told && frameCount.call(window) > 0) { told = true; up.postMessage({' +
        GUARD_KEY +
        ": 'blocked', what: 'frame'}, '*'); } };" +
        'const watcher = new Observer(sweep);' +
        'const watch = root => { roots[roots.length] = root; observe.call(watcher, root, {childList: true, subtree: true}); };' +
        'observe.call(watcher, document, {childList: true, subtree: true});' +
        'Element.prototype.attachShadow = function (init) { const root = attach.call(this, init); watch(root); return root; };' +
        'setInterval(sweep, 100); sweep();'
      : '') +
    '})();</script>'
  );
}

/**
 * The App's document: a doctype (so the App keeps standards mode), the CSP
 * `<meta>` and the prelude before anything of the App, then the App's HTML.
 * The policy holds only checked origins and keywords, so it needs no
 * escaping.
 */
export function buildSrcdoc(
  html: string,
  policy: string,
  prelude = ''
): string {
  return (
    '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="' +
    policy +
    '">' +
    prelude +
    html
  );
}

/**
 * The CSP of the guard document: the App's own policy, but `frame-src 'none'`
 * whatever the App declared, so no frame (the App's) may navigate to anything.
 *
 * It must allow all the App's policy allows but frames: the App's `srcdoc`
 * inherits the guard's policy (Chromium: a `srcdoc` document gets its
 * parent's policy container), and a request passes only when every policy
 * allows it.  With a guard of `default-src 'none'` an App could reach none of
 * its declared domains, load no `data:` image and start no worker.  The
 * guard's own document runs only its inline script and fetches nothing, so
 * the wider policy gives it nothing.  (Declared frame domains stay closed to
 * the App for the same reason: the guard's `frame-src 'none'` holds for them.)
 */
export function buildGuardCsp(csp: Required<McpUiResourceCsp>): string {
  return buildCsp({ ...csp, frameDomains: [] });
}

/**
 * The outer frame's document: it holds the App's frame and relays messages.
 *
 * On `{mcpNotebookGuard: "document", html, allow, title}` from the host it
 * makes the App's frame (the same sandbox, `allow` and no referrer) with
 * `html` as its `srcdoc`.  Other messages from the host go to the App, the
 * App's go to the host.  It tells the host `ready` when it runs, and `left`
 * (with `why`: `navigated` or `frame`) after it removed the App: on a second
 * `load` of the App's frame (it navigated: Chromium commits an error page
 * where `frame-src 'none'` blocked the navigation) or when the prelude asks.
 * It passes the prelude's `error` on to the host (the message cut again).
 */
export function buildGuardDocument(policy: string): string {
  return (
    '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="' +
    policy +
    '">' +
    GUARD_BODY
  );
}

/** The guard document after its CSP `<meta>`. */
const GUARD_BODY =
  '<style>html, body { margin: 0; padding: 0; height: 100%; overflow: hidden; } ' +
  'iframe { display: block; border: 0; width: 100%; height: 100%; }</style><body><script>(() => {' +
  "const KEY = '" +
  GUARD_KEY +
  "'; let app = null, loads = 0;" +
  "const left = why => { if (!app) return; app.remove(); app = null; parent.postMessage({[KEY]: 'left', why}, '*'); };" +
  "addEventListener('message', event => {" +
  ' const data = event.data, control = data && typeof data === "object" && typeof data[KEY] === "string" ? data[KEY] : null;' +
  ' if (event.source === parent) {' +
  "  if (control === 'document' && !app && typeof data.html === 'string') {" +
  "   app = document.createElement('iframe'); app.setAttribute('sandbox', 'allow-scripts allow-forms'); app.setAttribute('referrerpolicy', 'no-referrer');" +
  "   if (typeof data.allow === 'string' && data.allow) app.setAttribute('allow', data.allow);" +
  "   if (typeof data.title === 'string') app.title = data.title;" +
  "   app.addEventListener('load', () => { loads += 1; if (loads > 1) left('navigated'); });" +
  '   app.srcdoc = data.html; document.body.appendChild(app);' +
  "  } else if (control === null && app && app.contentWindow) { app.contentWindow.postMessage(data, '*'); }" +
  ' } else if (app && event.source === app.contentWindow) {' +
  "  if (control === 'blocked') left(data.what === 'frame' ? 'frame' : 'navigated');" +
  "  else if (control === 'error') parent.postMessage({[KEY]: 'error', message: typeof data.message === 'string' ? data.message.slice(0, " +
  MAX_ERROR_CHARS +
  ") : ''}, '*');" +
  "  else if (control === null) parent.postMessage(data, '*');" +
  ' }' +
  '});' +
  "parent.postMessage({[KEY]: 'ready'}, '*');" +
  '})();</script></body>';

/** The `permissions` object of a reply: only the four known keys. */
export function checkedPermissions(raw: unknown): McpUiResourcePermissions {
  const kept: McpUiResourcePermissions = {};
  if (!isObject(raw)) {
    return kept;
  }
  for (const key of [
    'camera',
    'microphone',
    'geolocation',
    'clipboardWrite'
  ] as const) {
    if (isObject(raw[key])) {
      kept[key] = {};
    }
  }
  return kept;
}

// ---------------------------------------------------------------------------
// Links
// ---------------------------------------------------------------------------

/**
 * Ask before opening a link an App wants opened.  The dialog shows the whole
 * URL and, highlighted, the host as the browser reads it.
 */
export async function confirmOpenLink(
  url: unknown
): Promise<{ isError?: boolean }> {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return { isError: true };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    console.warn('mcp-notebook: an App asked to open a non-http(s) link; refused');
    return { isError: true };
  }
  const body = document.createElement('div');
  body.className = 'mcp-notebook-app-link';
  const intro = document.createElement('p');
  intro.textContent = 'An MCP App in this notebook asks to open this link:';
  const full = document.createElement('p');
  full.className = 'mcp-notebook-app-link-url';
  full.textContent = String(url);
  const hostLine = document.createElement('p');
  hostLine.appendChild(document.createTextNode('It goes to '));
  const host = document.createElement('strong');
  host.className = APP_LINK_HOST_CLASS;
  host.textContent = parsed.host;
  hostLine.appendChild(host);
  hostLine.appendChild(
    document.createTextNode(
      parsed.protocol === 'http:' ? ' (not encrypted: http).' : '.'
    )
  );
  body.append(intro, full, hostLine);
  const result = await showDialog({
    title: 'Open a link from an MCP App?',
    body: new Widget({ node: body }),
    buttons: [
      Dialog.cancelButton({ label: 'Cancel' }),
      Dialog.okButton({ label: 'Open' })
    ],
    defaultButton: 0
  });
  if (!result.button.accept) {
    return { isError: true };
  }
  window.open(parsed.href, '_blank', 'noopener,noreferrer');
  return {};
}

// ---------------------------------------------------------------------------
// The hub: requests over the comm, replies, reloads
// ---------------------------------------------------------------------------

/** Error carrying a JSON-RPC code (the bridge sends it to the App as is). */
class AppError extends Error {
  constructor(
    message: string,
    readonly code: number = -32603,
    readonly kind: string = 'failed'
  ) {
    super(message);
  }
}

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

  /** A renderer factory bound to this hub. */
  factory(): IRenderMime.IRendererFactory {
    return {
      safe: true,
      mimeTypes: [APP_MIME],
      defaultRank: APP_RANK,
      createRenderer: options => new AppOutput(options, this)
    };
  }

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
        pending.reject(new AppError('the kernel is gone'));
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
        pending.reject(new AppError('the kernel closed the connection'));
      }
    }
  }

  register(key: object, output: AppOutput): void {
    let set = this.outputs.get(key);
    if (!set) {
      set = new Set();
      this.outputs.set(key, set);
    }
    set.add(output);
  }

  unregister(key: object, output: AppOutput): void {
    this.outputs.get(key)?.delete(output);
  }

  private outputsOf(key: object): AppOutput[] {
    return Array.from(this.outputs.get(key) ?? []);
  }

  // Random start: two pages on one kernel see each other's replies.
  private nextReq = 1 + Math.floor(Math.random() * 2 ** 40);
  private pending = new Map<number, IPending>();
  private outputs = new WeakMap<object, Set<AppOutput>>();
}

// ---------------------------------------------------------------------------
// The renderer
// ---------------------------------------------------------------------------

type State =
  | 'new' // nothing asked yet
  | 'nocomm' // no kernel connection (waits for one)
  | 'opening' // app_open or app_activate sent
  | 'live' // the App runs in a frame
  | 'fallback' // the kernel does not know the App: text + Activate
  | 'gone'; // the kernel is gone

function currentTheme(): 'light' | 'dark' {
  return document.body.dataset.jpThemeLight === 'false' ? 'dark' : 'light';
}

/** The rendered App output. */
export class AppOutput extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions, hub: AppHub) {
    super();
    this.hub = hub;
    this.mimeType = options.mimeType;
    this.addClass(APP_CLASS);
    this.addClass(FORM_CLASS);
    this.node.dataset.appState = 'new';
    this.status = document.createElement('div');
    this.status.className = APP_STATUS_CLASS;
    this.note = document.createElement('div');
    this.note.className = APP_NOTE_CLASS;
    this.note.setAttribute('role', 'status');
    this.body = document.createElement('div');
    this.body.className = 'mcp-notebook-app-body';
    this.node.append(this.status, this.note, this.body);
  }

  readonly mimeType: string;

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = readAppData(model.data[this.mimeType]);
    const fallback = model.data['text/plain'];
    this.fallbackText =
      typeof fallback === 'string'
        ? fallback
        : Array.isArray(fallback)
          ? fallback.join('')
          : '';
    if (
      data &&
      this.data &&
      data.app === this.data.app &&
      this.state !== 'new'
    ) {
      // The same App again (a re-render of the same output): keep it.
      this.data = data;
      return Promise.resolve();
    }
    this.stopLive();
    this.data = data;
    this.setState('new');
    if (!data) {
      this.node.removeAttribute('data-app-id');
      this.node.removeAttribute('data-server');
      this.status.textContent = 'App: (invalid App output)';
      this.showFallback('This output does not name a valid App.', false);
      return Promise.resolve();
    }
    this.node.dataset.appId = data.app;
    this.node.dataset.server = data.server;
    this.status.textContent = `App: ${data.tool} from ${data.server} (${data.uri})`;
    this.status.title = this.status.textContent;
    if (this.isAttached) {
      this.start();
    }
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.stopLive();
    if (this.host) {
      this.hub.unregister(this.host.key, this);
    }
    this.themeObserver?.disconnect();
    super.dispose();
  }

  /** The kernel says the App's server was redefined. */
  reloadIfServer(server: string): void {
    if (this.data && this.data.server === server && this.state === 'live') {
      this.open('app_open');
    }
  }

  /** A comm opened in this notebook. */
  commAvailable(): void {
    if (this.state === 'nocomm' && this.isAttached) {
      this.start();
    }
  }

  /** The kernel restarted or stopped: the App can no longer reach it. */
  kernelGone(): void {
    if (this.state === 'live' || this.state === 'opening') {
      // The stale banner (index.ts) says so; the frame is covered.
      this.setState('gone');
      this.setNote('');
    } else if (this.state === 'fallback') {
      // Activating needs the new kernel's connection: wait for it.
      this.setState('nocomm');
      this.showFallback(NO_COMM_NOTE, false);
    }
  }

  protected onAfterAttach(): void {
    if (this.data && (this.state === 'new' || this.reopenOnAttach)) {
      this.reopenOnAttach = false;
      this.start();
    }
  }

  protected onBeforeDetach(): void {
    // A detached iframe loses its document: ask again when shown again.
    if (this.state === 'live' || this.state === 'opening') {
      this.stopLive();
      this.setState('new');
      this.reopenOnAttach = true;
    }
  }

  /** Find the notebook and its comm, then ask the kernel for the App. */
  private start(): void {
    if (!this.data || this.isDisposed) {
      return;
    }
    if (!this.host) {
      this.host = this.hub.locate(this);
      if (this.host) {
        this.hub.register(this.host.key, this);
      }
    }
    if (!this.host || !this.host.comm()) {
      this.setState('nocomm');
      this.showFallback(
        this.host
          ? NO_COMM_NOTE
          : 'This output is not in a notebook with an mcp-notebook kernel connection.',
        false
      );
      return;
    }
    this.open('app_open');
  }

  /** Send app_open or app_activate and show what comes back. */
  private open(op: 'app_open' | 'app_activate'): void {
    const data = this.data;
    const host = this.host;
    const comm = host?.comm() ?? null;
    if (!data || !host || !comm) {
      this.start();
      return;
    }
    const body: JSONObject = { op, app: data.app };
    if (op === 'app_activate') {
      body.server = data.server;
      body.tool = data.tool;
      body.uri = data.uri;
      body.tool_input = data.toolInput;
      body.tool_result = data.toolResult;
      body.sig = data.sig;
    }
    const generation = ++this.generation;
    this.setState('opening');
    if (!this.frame) {
      this.setNote(
        op === 'app_open'
          ? 'Asking the kernel for the App…'
          : 'Activating the App…'
      );
    }
    this.hub
      .request(host.key, comm, body)
      .then(reply => {
        if (this.isDisposed || generation !== this.generation) {
          return;
        }
        if (reply.op === 'app_resource') {
          this.showLive(comm, reply);
        } else if (reply.op === 'app_error' && reply.kind === 'not_live') {
          this.stopLive();
          this.setState('fallback');
          this.showFallback(
            op === 'app_open'
              ? 'The App is not live in this kernel.'
              : str(reply.message) || 'The App could not be activated.',
            true
          );
        } else {
          this.stopLive();
          this.setState('fallback');
          this.showFallback(
            str(reply.message) || 'The kernel could not open the App.',
            true
          );
        }
      })
      .catch((reason: unknown) => {
        if (this.isDisposed || generation !== this.generation) {
          return;
        }
        this.stopLive();
        this.setState('fallback');
        this.showFallback(
          `The App could not be opened: ${reason instanceof Error ? reason.message : String(reason)}.`,
          true
        );
      });
  }

  private setState(state: State): void {
    this.state = state;
    this.node.dataset.appState = state;
  }

  private setNote(text: string): void {
    this.note.textContent = text;
    this.note.hidden = text === '';
  }

  /** The text result and the Activate button (disabled without a comm). */
  private showFallback(note: string, canActivate: boolean): void {
    this.stopLive();
    this.setNote('');
    this.body.replaceChildren();
    const box = document.createElement('div');
    box.className = APP_FALLBACK_CLASS;
    const text = document.createElement('pre');
    text.className = APP_FALLBACK_TEXT_CLASS;
    text.textContent = this.fallbackText;
    const row = document.createElement('div');
    row.className = 'mcp-notebook-app-fallback-row';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = `${APP_ACTIVATE_CLASS} jp-Button jp-mod-styled jp-mod-accept`;
    button.textContent = 'Activate App';
    button.title =
      'Fetch this App from its server in this kernel and run it here';
    const message = document.createElement('span');
    message.className = 'mcp-notebook-app-fallback-note';
    message.textContent = note;
    const usable = canActivate && !!this.data && !!this.host?.comm();
    button.disabled = !usable;
    if (!usable) {
      button.setAttribute('aria-disabled', 'true');
    }
    button.addEventListener('click', () => {
      if (button.disabled || !this.data) {
        return;
      }
      button.disabled = true;
      message.textContent = 'Activating the App…';
      this.open('app_activate');
    });
    row.append(button, message);
    box.append(text, row);
    this.body.appendChild(box);
  }

  /** Put the App in a fresh sandboxed frame and connect the bridge. */
  private showLive(comm: Kernel.IComm, reply: JSONObject): void {
    const data = this.data;
    if (!data) {
      return;
    }
    this.stopLive();
    this.setNote('');
    this.body.replaceChildren();
    this.setState('live');
    const html = typeof reply.html === 'string' ? reply.html : '';
    const csp = checkedCsp(reply.csp);
    const permissions = checkedPermissions(reply.permissions);
    // Only what the kernel sends: it leaves out a reopened output's saved
    // data unless that output is signed by this user.
    const toolInput = isObject(reply.tool_input) ? reply.tool_input : {};
    const toolResult = isObject(reply.tool_result) ? reply.tool_result : null;
    if (reply.saved_data === 'unsigned') {
      this.node.dataset.savedData = 'unsigned';
      this.setNote(UNSIGNED_NOTE);
    } else {
      delete this.node.dataset.savedData;
    }
    this.toggleClass(APP_BORDER_CLASS, reply.prefers_border === true);

    // The outer frame holds the guard (buildGuardDocument), which makes the
    // App's own frame inside it when it is ready.
    const frame = document.createElement('iframe');
    frame.className = APP_FRAME_CLASS;
    frame.setAttribute('sandbox', 'allow-scripts allow-forms');
    const allow = buildAllowAttribute(permissions);
    if (allow) {
      frame.setAttribute('allow', allow);
    }
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.title = `MCP App: ${data.tool} from ${data.server}`;
    delete this.node.dataset.appRemoved;
    frame.style.width = '100%';
    frame.style.height = `${INITIAL_HEIGHT}px`;
    this.body.appendChild(frame);
    this.frame = frame;
    // The tool's own text stays readable under the App (folded), and opens
    // by itself when the App does not start.
    const result = this.resultText();
    if (result) {
      this.body.appendChild(result);
    }
    this.node.dataset.appStarted = 'waiting';
    this.initTimer = window.setTimeout(() => {
      this.initTimer = 0;
      this.notStarted(
        `The App did not start (it sent no "initialized" within ${INIT_TIMEOUT_MS / 1000} s).`
      );
    }, INIT_TIMEOUT_MS);
    const win = frame.contentWindow;
    if (!win) {
      this.showFallback('The App frame could not be created.', true);
      return;
    }

    const hostContext: McpUiHostContext = {
      theme: currentTheme(),
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      platform: 'web',
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: `${HOST_INFO.name}/${HOST_INFO.version}`,
      containerDimensions: { maxHeight: MAX_HEIGHT },
      toolInfo: {
        tool: {
          name: data.tool,
          inputSchema: { type: 'object' }
        } as any
      }
    };
    const bridge = new AppBridge(
      null,
      HOST_INFO,
      {
        openLinks: {},
        serverTools: {},
        serverResources: {},
        logging: {},
        message: { text: {} },
        updateModelContext: { text: {} },
        sandbox: { permissions, csp }
      },
      { hostContext }
    );
    this.bridge = bridge;
    const app = data.app;

    const call = async (
      method: 'tools/call' | 'resources/read',
      params: unknown
    ): Promise<any> => {
      if (comm.isDisposed || this.state === 'gone') {
        throw new AppError('the kernel that showed this App is gone');
      }
      const key = this.host?.key;
      if (!key) {
        throw new AppError('no notebook');
      }
      const answer = await this.hub.request(key, comm, {
        op: 'app_request',
        app,
        method,
        params: isObject(params) ? params : {}
      });
      if (isObject(answer.error)) {
        const code = answer.error.code;
        throw new AppError(
          str(answer.error.message) || 'the request failed',
          typeof code === 'number' && Number.isSafeInteger(code)
            ? code
            : -32603
        );
      }
      if (answer.op === 'app_error') {
        throw new AppError(str(answer.message) || 'the request failed');
      }
      return isObject(answer.result) ? answer.result : {};
    };
    const notify = (method: string, params: unknown): void => {
      if (!comm.isDisposed && this.state !== 'gone') {
        this.hub.send(comm, {
          op: 'app_notify',
          app,
          method,
          params: isObject(params) ? params : {}
        });
      }
    };

    bridge.oncalltool = params => call('tools/call', params);
    bridge.onreadresource = params => call('resources/read', params);
    bridge.onmessage = async params => {
      notify('ui/message', params);
      return {};
    };
    bridge.onupdatemodelcontext = async params => {
      notify('ui/update-model-context', params);
      return {};
    };
    bridge.onloggingmessage = params => notify('notifications/message', params);
    bridge.onopenlink = async params => {
      if (this.linkDialogOpen) {
        return { isError: true };
      }
      this.linkDialogOpen = true;
      try {
        return await confirmOpenLink(params.url);
      } finally {
        this.linkDialogOpen = false;
      }
    };
    bridge.onrequestdisplaymode = async () => ({ mode: 'inline' });
    bridge.onsizechange = ({ height }) => {
      if (typeof height === 'number' && Number.isFinite(height)) {
        const h = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)));
        frame.style.height = `${h}px`;
      }
    };
    bridge.oninitialized = () => {
      if (this.frame !== frame) {
        return;
      }
      this.clearInitTimer();
      if (this.node.dataset.appStarted === 'failed') {
        this.setNote(this.node.dataset.savedData === 'unsigned' ? UNSIGNED_NOTE : '');
      }
      this.node.dataset.appStarted = 'yes';
      void bridge
        .sendToolInput({ arguments: toolInput })
        .then(() =>
          toolResult ? bridge.sendToolResult(toolResult as any) : undefined
        )
        .catch(reason =>
          console.warn('mcp-notebook: could not send the tool call to the App', reason)
        );
    };

    if (!this.themeObserver) {
      this.themeObserver = new MutationObserver(() => {
        this.bridge?.setHostContext({
          ...hostContext,
          theme: currentTheme()
        });
      });
      this.themeObserver.observe(document.body, {
        attributes: true,
        attributeFilter: ['data-jp-theme-light']
      });
    }

    const appDocument = buildSrcdoc(html, buildCsp(csp), buildPrelude(csp));
    const onGuard = (event: MessageEvent): void => {
      const message: unknown = event.data;
      if (
        event.source !== win ||
        this.frame !== frame ||
        !isObject(message) ||
        typeof message[GUARD_KEY] !== 'string'
      ) {
        return;
      }
      if (message[GUARD_KEY] === 'ready') {
        win.postMessage(
          { [GUARD_KEY]: 'document', html: appDocument, allow, title: frame.title },
          '*'
        );
      } else if (message[GUARD_KEY] === 'left') {
        this.appRemoved(message.why === 'frame' ? 'frame' : 'navigated');
      } else if (message[GUARD_KEY] === 'error') {
        this.notStarted(
          `The App failed before it started: ${str(message.message).slice(0, MAX_ERROR_CHARS) || 'an error'}.`
        );
      }
    };
    window.addEventListener('message', onGuard);
    this.guardListener = onGuard;

    const transport = new PostMessageTransport(win, win);
    bridge
      .connect(transport)
      .then(() => {
        if (this.frame === frame && !this.isDisposed) {
          frame.srcdoc = buildGuardDocument(buildGuardCsp(csp));
        }
      })
      .catch(reason => {
        console.warn('mcp-notebook: could not connect to the App', reason);
        if (this.frame === frame) {
          this.showFallback('The App could not be started.', true);
        }
      });
  }

  /**
   * The tool's text result (the output's `text/plain`) under a live App:
   * folded, so it does not double what the App shows, but there to read or
   * copy.  `null` when the result has no text.
   */
  private resultText(): HTMLDetailsElement | null {
    if (!this.fallbackText) {
      return null;
    }
    const box = document.createElement('details');
    box.className = APP_RESULT_CLASS;
    const summary = document.createElement('summary');
    summary.textContent = "The tool's text result";
    const text = document.createElement('pre');
    text.className = APP_RESULT_TEXT_CLASS;
    text.textContent = this.fallbackText;
    box.append(summary, text);
    return box;
  }

  /**
   * The App has not initialized (it threw, or stayed silent): say so and open
   * the tool's text result.  Ignored once it did initialize: its later
   * errors are its own business.
   */
  private notStarted(note: string): void {
    if (
      this.state !== 'live' ||
      this.node.dataset.appStarted !== 'waiting'
    ) {
      return;
    }
    this.clearInitTimer();
    this.node.dataset.appStarted = 'failed';
    this.setNote(
      `${note} The tool's text result is below; the frame stays in case the App still starts.`
    );
    const result = this.body.querySelector<HTMLDetailsElement>(
      `details.${APP_RESULT_CLASS}`
    );
    if (result) {
      result.open = true;
    }
  }

  private clearInitTimer(): void {
    if (this.initTimer) {
      window.clearTimeout(this.initTimer);
      this.initTimer = 0;
    }
  }

  /** The guard removed the App's frame (it navigated, or added a frame): say so, offer Activate again. */
  private appRemoved(why: 'navigated' | 'frame'): void {
    this.setState('fallback');
    this.showFallback(LEFT_NOTES[why], true);
    this.node.dataset.appRemoved = why;
  }

  /** Tear the App down (if live) and remove its frame. */
  private stopLive(): void {
    this.clearInitTimer();
    delete this.node.dataset.appStarted;
    if (this.guardListener) {
      window.removeEventListener('message', this.guardListener);
      this.guardListener = null;
    }
    const bridge = this.bridge;
    this.bridge = null;
    if (bridge) {
      const close = () => {
        void bridge.close().catch(() => undefined);
      };
      bridge
        .teardownResource({}, { timeout: 1000 })
        .then(close, close);
    }
    if (this.frame) {
      this.frame.remove();
      this.frame = null;
    }
    this.removeClass(APP_BORDER_CLASS);
  }

  private hub: AppHub;
  private host: IAppHost | null = null;
  private data: IAppData | null = null;
  private fallbackText = '';
  private state: State = 'new';
  private generation = 0;
  private reopenOnAttach = false;
  private linkDialogOpen = false;
  private bridge: AppBridge | null = null;
  private frame: HTMLIFrameElement | null = null;
  private guardListener: ((event: MessageEvent) => void) | null = null;
  private initTimer = 0;
  private themeObserver: MutationObserver | null = null;
  private status: HTMLElement;
  private note: HTMLElement;
  private body: HTMLElement;
}

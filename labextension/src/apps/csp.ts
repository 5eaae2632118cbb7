/**
 * The App's isolation: its Content Security Policy, the script that runs
 * before it, and the guard document around it.
 *
 * The App runs in two nested frames, both
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
 *   (checked by the kernel and again here: `checkedCsp`), then a prelude
 *   script (`buildPrelude`) that runs before the App's own code: it removes
 *   `RTCPeerConnection` (Chromium ignores CSP's `webrtc 'block'`) and, for an
 *   App that declares no frame domains, every nested frame it adds.
 *
 * Nothing here touches the page: these are strings and checked lists (the
 * unit specs load this file as is).
 */

import type {
  McpUiResourceCsp,
  McpUiResourcePermissions
} from '@modelcontextprotocol/ext-apps/app-bridge';

import { isObject } from '../common';

/** The key of the guard's control messages (never JSON-RPC: the bridge's transport ignores them). */
export const GUARD_KEY = 'mcpNotebookGuard';

/** The longest error message of an App's page that the output repeats. */
export const MAX_ERROR_CHARS = 300;

/** Limits on what the page accepts as CSP domains. */
export const MAX_DOMAINS = 64;
export const MAX_DOMAIN_LENGTH = 260;

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
 *   initialized is said to have failed at once, not after the output's wait
 *   for `initialized` (`output.ts`).
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

/**
 * A live MCP App in an output, wherever it is shown (`AppView`): the status
 * line, the text fallback with "Activate App", and the App in its frames.
 * The labextension's renderer (`output.ts`) and the widget front end
 * (`../widget/app_widget.ts`, for front ends without the extension) both put
 * one on their node, so the sandbox, the CSP, the guard, the link rule and
 * the bridge are written once, here and in `csp.ts`.
 *
 * A live App is put up in steps: the outer frame (`openFrame`), the bridge
 * to the App and its answers (`createBridge`, `answerApp`), the App's
 * document under its checked policy inside the guard (`guardFrame`, with
 * `csp.ts`), then the connection (`connectBridge`).
 *
 * Nothing from the output data or the kernel is ever parsed as HTML in this
 * page: only text nodes and attributes.
 */

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

import { FORM_CLASS, isObject, JSONObject, reasonText, str } from '../common';
import {
  buildCsp,
  buildGuardCsp,
  buildGuardDocument,
  buildPrelude,
  buildSrcdoc,
  checkedCsp,
  checkedPermissions,
  GUARD_KEY,
  MAX_ERROR_CHARS
} from './csp';
import {
  APP_ACTIVATE_CLASS,
  APP_BORDER_CLASS,
  APP_CLASS,
  APP_FALLBACK_CLASS,
  APP_FALLBACK_TEXT_CLASS,
  APP_FRAME_CLASS,
  APP_NOTE_CLASS,
  APP_RESULT_CLASS,
  APP_RESULT_TEXT_CLASS,
  APP_STATUS_CLASS,
  IAppData
} from './data';
import { AppError } from './errors';

/**
 * How an `AppView` reaches its kernel: the `app_*` messages of `hub.ts`
 * (`request` gets the reply to a message, `send` one that has none).
 */
export interface IAppChannel {
  /** Whether the kernel can still be reached this way. */
  open(): boolean;
  request(body: JSONObject): Promise<JSONObject>;
  send(body: JSONObject): void;
}

/** What the view needs of where it is shown. */
export interface IAppPlace {
  /** The way to the kernel now, or null (no connection yet: the view waits for `channelAvailable`). */
  channel(): IAppChannel | null;
  /** What the fallback says while there is no channel. */
  noChannelNote(): string;
  /** Ask the user before opening a link the App asks for; `{}` when opened. */
  confirmLink(url: unknown): Promise<{ isError?: boolean }>;
  /** A failure the user should hear of beyond the output's note (plain text). */
  failure(text: string): void;
}

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

/** One App output's view, on a node its front end owns. */
export class AppView {
  constructor(
    readonly node: HTMLElement,
    private place: IAppPlace
  ) {
    node.classList.add(APP_CLASS, FORM_CLASS);
    node.dataset.appState = 'new';
    this.status = document.createElement('div');
    this.status.className = APP_STATUS_CLASS;
    this.note = document.createElement('div');
    this.note.className = APP_NOTE_CLASS;
    this.note.setAttribute('role', 'status');
    this.body = document.createElement('div');
    this.body.className = 'mcp-notebook-app-body';
    node.append(this.status, this.note, this.body);
  }

  /**
   * Show an output's data (`null`: not a valid App output) and its text;
   * a live view starts (or keeps) its App when `attached`.
   */
  show(data: IAppData | null, fallbackText: string, attached: boolean): void {
    this.fallbackText = fallbackText;
    if (data && this.data && data.app === this.data.app && this.state !== 'new') {
      // The same App again (a re-render of the same output): keep it.
      this.data = data;
      return;
    }
    this.stopLive();
    this.data = data;
    this.setState('new');
    if (!data) {
      this.node.removeAttribute('data-app-id');
      this.node.removeAttribute('data-server');
      this.status.textContent = 'App: (invalid App output)';
      this.showFallback('This output does not name a valid App.', false);
      return;
    }
    this.node.dataset.appId = data.app;
    this.node.dataset.server = data.server;
    this.status.textContent = `App: ${data.tool} from ${data.server} (${data.uri})`;
    this.status.title = this.status.textContent;
    if (attached) {
      this.start();
    }
  }

  /** The App's server, or null before any data. */
  get server(): string | null {
    return this.data?.server ?? null;
  }

  dispose(): void {
    this.disposed = true;
    this.stopLive();
    this.themeObserver?.disconnect();
  }

  /** The kernel says the App's server was redefined. */
  reloadIfServer(server: string): void {
    if (this.data && this.data.server === server && this.state === 'live') {
      this.open('app_open');
    }
  }

  /** A way to the kernel opened (a comm in this notebook). */
  channelAvailable(attached: boolean): void {
    if (this.state === 'nocomm' && attached) {
      this.start();
    }
  }

  /** The kernel restarted or stopped: the App can no longer reach it. */
  kernelGone(): void {
    if (this.state === 'live' || this.state === 'opening') {
      // The stale banner (stale.ts) says so; the frame is covered.
      this.setState('gone');
      this.setNote('');
    } else if (this.state === 'fallback') {
      // Activating needs the new kernel's connection: wait for it.
      this.setState('nocomm');
      this.showFallback(this.place.noChannelNote(), false);
    }
  }

  /** The node was put on the page. */
  attached(): void {
    if (this.data && (this.state === 'new' || this.reopenOnAttach)) {
      this.reopenOnAttach = false;
      this.start();
    }
  }

  /** The node is about to leave the page: a detached iframe loses its document, so ask again when shown again. */
  detaching(): void {
    if (this.state === 'live' || this.state === 'opening') {
      this.stopLive();
      this.setState('new');
      this.reopenOnAttach = true;
    }
  }

  /** Find the way to the kernel, then ask it for the App. */
  private start(): void {
    if (!this.data || this.disposed) {
      return;
    }
    if (!this.place.channel()) {
      this.setState('nocomm');
      this.showFallback(this.place.noChannelNote(), false);
      return;
    }
    this.open('app_open');
  }

  /** Send app_open or app_activate and show what comes back. */
  private open(op: 'app_open' | 'app_activate'): void {
    const data = this.data;
    const channel = this.place.channel();
    if (!data || !channel) {
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
    channel
      .request(body)
      .then(reply => {
        if (this.disposed || generation !== this.generation) {
          return;
        }
        if (reply.op === 'app_resource') {
          this.showLive(channel, reply);
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
        if (this.disposed || generation !== this.generation) {
          return;
        }
        this.stopLive();
        this.setState('fallback');
        this.showFallback(
          `The App could not be opened: ${reasonText(reason)}.`,
          true
        );
        // A gone kernel is said by the stale banner; anything else is news.
        if (!(reason instanceof AppError && reason.kind === 'gone')) {
          this.place.failure(
            `The App ${data.tool} from ${data.server} could not be opened: ${reasonText(reason)}.`
          );
        }
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
    const usable = canActivate && !!this.data && !!this.place.channel();
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

  /**
   * Put the App in a fresh sandboxed frame and connect the bridge: the frame,
   * the bridge, the App's document under its policy inside the guard, then
   * the connection.
   */
  private showLive(channel: IAppChannel, reply: JSONObject): void {
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
    this.node.classList.toggle(APP_BORDER_CLASS, reply.prefers_border === true);

    const { frame, allow } = this.openFrame(data, permissions);
    const win = frame.contentWindow;
    if (!win) {
      this.showFallback('The App frame could not be created.', true);
      this.place.failure(
        `The App ${data.tool} from ${data.server} could not be shown: its frame could not be created.`
      );
      return;
    }
    const hostContext = this.hostContextFor(data);
    const bridge = this.createBridge(data, hostContext, { permissions, csp });
    this.answerApp(bridge, channel, data.app, frame, toolInput, toolResult);
    this.watchTheme(hostContext);
    const appDocument = buildSrcdoc(html, buildCsp(csp), buildPrelude(csp));
    this.guardFrame(win, frame, allow, appDocument);
    this.connectBridge(bridge, win, frame, csp, data);
  }

  /**
   * The frame step: the outer frame (it will hold the guard, which makes the
   * App's own frame inside it when it is ready), sandboxed, without
   * referrer, `allow` from the App's permissions; the tool's text result
   * folded under it; the wait for the App's `initialized`.
   */
  private openFrame(
    data: IAppData,
    permissions: McpUiResourcePermissions
  ): { frame: HTMLIFrameElement; allow: string } {
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
    return { frame, allow };
  }

  /** What the App is told of its host (the theme follows JupyterLab's). */
  private hostContextFor(data: IAppData): McpUiHostContext {
    return {
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
  }

  /** The bridge step: ext-apps' host side, with what this host offers (no JS MCP client). */
  private createBridge(
    data: IAppData,
    hostContext: McpUiHostContext,
    sandbox: {
      permissions: McpUiResourcePermissions;
      csp: Required<McpUiResourceCsp>;
    }
  ): AppBridge {
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
        sandbox
      },
      { hostContext }
    );
    this.bridge = bridge;
    return bridge;
  }

  /**
   * How the bridge answers the App: its requests go to the kernel, its
   * notifications too, links only after a dialog, its size sets the frame's
   * height, and once it is initialized it gets the tool call.
   */
  private answerApp(
    bridge: AppBridge,
    channel: IAppChannel,
    app: string,
    frame: HTMLIFrameElement,
    toolInput: JSONObject,
    toolResult: JSONObject | null
  ): void {
    bridge.oncalltool = params =>
      this.appRequest(channel, app, 'tools/call', params);
    bridge.onreadresource = params =>
      this.appRequest(channel, app, 'resources/read', params);
    bridge.onmessage = async params => {
      this.appNotify(channel, app, 'ui/message', params);
      return {};
    };
    bridge.onupdatemodelcontext = async params => {
      this.appNotify(channel, app, 'ui/update-model-context', params);
      return {};
    };
    bridge.onloggingmessage = params =>
      this.appNotify(channel, app, 'notifications/message', params);
    bridge.onopenlink = async params => {
      if (this.linkDialogOpen) {
        return { isError: true };
      }
      this.linkDialogOpen = true;
      try {
        return await this.place.confirmLink(params.url);
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
  }

  /** The App's `tools/call` or `resources/read`, asked of the kernel. */
  private async appRequest(
    channel: IAppChannel,
    app: string,
    method: 'tools/call' | 'resources/read',
    params: unknown
  ): Promise<any> {
    if (!channel.open() || this.state === 'gone') {
      throw new AppError('the kernel that showed this App is gone');
    }
    const answer = await channel.request({
      op: 'app_request',
      app,
      method,
      params: isObject(params) ? params : {}
    });
    if (isObject(answer.error)) {
      const code = answer.error.code;
      throw new AppError(
        str(answer.error.message) || 'the request failed',
        typeof code === 'number' && Number.isSafeInteger(code) ? code : -32603
      );
    }
    if (answer.op === 'app_error') {
      throw new AppError(str(answer.message) || 'the request failed');
    }
    return isObject(answer.result) ? answer.result : {};
  }

  /** A notification of the App, passed to the kernel (no reply). */
  private appNotify(
    channel: IAppChannel,
    app: string,
    method: string,
    params: unknown
  ): void {
    if (channel.open() && this.state !== 'gone') {
      channel.send({
        op: 'app_notify',
        app,
        method,
        params: isObject(params) ? params : {}
      });
    }
  }

  /** Tell the App when JupyterLab's theme changes (one observer per output). */
  private watchTheme(hostContext: McpUiHostContext): void {
    if (this.themeObserver) {
      return;
    }
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

  /**
   * The CSP step: the guard in the outer frame asks for the App's document
   * (`appDocument`: the App's HTML after its policy `<meta>` and the prelude)
   * and gets it with `allow`; the guard's word that it removed the App, or
   * that the App failed before it started, is shown in the output.
   */
  private guardFrame(
    win: Window,
    frame: HTMLIFrameElement,
    allow: string,
    appDocument: string
  ): void {
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
  }

  /**
   * Connect the bridge to the outer frame, then load the guard document
   * (under `buildGuardCsp`: the App's policy with `frame-src 'none'`).
   */
  private connectBridge(
    bridge: AppBridge,
    win: Window,
    frame: HTMLIFrameElement,
    csp: Required<McpUiResourceCsp>,
    data: IAppData
  ): void {
    const transport = new PostMessageTransport(win, win);
    bridge
      .connect(transport)
      .then(() => {
        if (this.frame === frame && !this.disposed) {
          frame.srcdoc = buildGuardDocument(buildGuardCsp(csp));
        }
      })
      .catch(reason => {
        console.warn('mcp-notebook: could not connect to the App', reason);
        if (this.frame === frame) {
          this.showFallback('The App could not be started.', true);
          this.place.failure(
            `The App ${data.tool} from ${data.server} could not be started: ${reasonText(reason)}.`
          );
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
    this.node.classList.remove(APP_BORDER_CLASS);
  }

  private data: IAppData | null = null;
  private fallbackText = '';
  private state: State = 'new';
  private generation = 0;
  private disposed = false;
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

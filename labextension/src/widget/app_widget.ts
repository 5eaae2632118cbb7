/**
 * An MCP App in front ends without the labextension (JupyterLab or Notebook 7
 * with it disabled, VS Code, Colab): the front end of an `anywidget` widget
 * (`mcp_notebook/notebook/app_widget.py`), which travels with the widget
 * model, so it runs wherever ipywidgets render.
 *
 * It puts the same `AppView` (../apps/view.ts) on the widget's node: the
 * sandboxed frames, the guard, the App's checked policy and the bridge are
 * the labextension's, not a copy. Only the way to the kernel differs: the
 * `app_*` messages of ../apps/hub.ts go as the widget's custom messages
 * (`model.send`, `msg:custom`), and the kernel answers them with the same
 * `AppHost`. A link the App asks for is asked about in the output itself
 * (no JupyterLab dialog here), by the rule of ../apps/link_rule.ts.
 *
 * Built into `mcp_notebook/notebook/static/app_widget.js` (an ES module) by
 * `jlpm build:widget`.
 */

import { isObject, JSONObject } from '../common';
import { readAppData } from '../apps/data';
import { AppError, REQUEST_TIMEOUT_MS } from '../apps/errors';
import { linkQuestion, openAgreedLink, readLink } from '../apps/link_rule';
import { AppView, IAppChannel } from '../apps/view';

/** The part of anywidget's model this front end uses. */
interface IModel {
  get(name: string): unknown;
  send(content: JSONObject): void;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event: string, callback: (...args: any[]) => void): void;
}

/** How often the view checks whether its node is on the page. */
const ATTACH_POLL_MS = 100;

interface IPending {
  resolve: (reply: JSONObject) => void;
  reject: (reason: AppError) => void;
  timer: number;
}

/** The widget's messages to and from the kernel, matched by `req`. */
class WidgetChannel implements IAppChannel {
  constructor(private model: IModel) {}

  open(): boolean {
    return !this.closed;
  }

  request(body: JSONObject): Promise<JSONObject> {
    const req = ++this.last;
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this.pending.delete(req);
        reject(new AppError('the kernel did not answer in time'));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(req, { resolve, reject, timer });
      try {
        this.model.send({ ...body, req });
      } catch (reason) {
        window.clearTimeout(timer);
        this.pending.delete(req);
        reject(new AppError('could not send to the kernel'));
      }
    });
  }

  send(body: JSONObject): void {
    try {
      this.model.send(body);
    } catch (reason) {
      console.warn('mcp-notebook: could not send to the kernel', reason);
    }
  }

  /** A message from the kernel: the reply to one of ours (by `req`), else null. */
  answer(message: unknown): boolean {
    if (!isObject(message) || typeof message.req !== 'number') {
      return false;
    }
    const pending = this.pending.get(message.req);
    if (!pending) {
      return true;
    }
    this.pending.delete(message.req);
    window.clearTimeout(pending.timer);
    pending.resolve(message);
    return true;
  }

  close(): void {
    this.closed = true;
    for (const pending of this.pending.values()) {
      window.clearTimeout(pending.timer);
      pending.reject(new AppError('the App output was closed', -32603, 'gone'));
    }
    this.pending.clear();
  }

  private last = 0;
  private closed = false;
  private pending = new Map<number, IPending>();
}

/**
 * Ask in the output before opening a link: the whole URL, the host it goes
 * to, Cancel (the default) and Open. One question at a time per output.
 */
function askInOutput(node: HTMLElement, url: unknown): Promise<{ isError?: boolean }> {
  const parsed = readLink(url);
  if (!parsed) {
    return Promise.resolve({ isError: true });
  }
  return new Promise(resolve => {
    const box = document.createElement('div');
    box.className = 'mcp-notebook-app-link-ask';
    box.setAttribute('role', 'alertdialog');
    box.setAttribute('aria-label', 'Open a link from an MCP App?');
    const title = document.createElement('strong');
    title.textContent = 'Open a link from an MCP App?';
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.textContent = 'Cancel';
    const open = document.createElement('button');
    open.type = 'button';
    open.textContent = 'Open';
    const row = document.createElement('div');
    row.append(cancel, open);
    box.append(title, linkQuestion(url, parsed), row);
    const done = (agreed: boolean): void => {
      box.remove();
      if (agreed) {
        openAgreedLink(parsed);
        resolve({});
      } else {
        resolve({ isError: true });
      }
    };
    cancel.addEventListener('click', () => done(false));
    open.addEventListener('click', () => done(true));
    node.prepend(box);
    cancel.focus();
  });
}

function render({ model, el }: { model: IModel; el: HTMLElement }): () => void {
  const channel = new WidgetChannel(model);
  const node = document.createElement('div');
  el.appendChild(node);
  const view = new AppView(node, {
    channel: () => (channel.open() ? channel : null),
    noChannelNote: () => 'This App output has no connection to its kernel.',
    confirmLink: url => askInOutput(node, url),
    failure: text => console.warn(`mcp-notebook: ${text}`)
  });
  const onMessage = (message: unknown): void => {
    if (channel.answer(message)) {
      return;
    }
    if (isObject(message) && message.op === 'app_reload' && typeof message.server === 'string') {
      view.reloadIfServer(message.server);
    }
  };
  model.on('msg:custom', onMessage);
  const text = model.get('text');
  view.show(readAppData(model.get('data')), typeof text === 'string' ? text : '', false);
  // The App's frame has a document only on the page: start once the node is there, and ask again
  // when it comes back (a front end may take outputs off the page while they are scrolled away).
  let shown = false;
  const watch = window.setInterval(() => {
    if (node.isConnected && !shown) {
      shown = true;
      view.attached();
    } else if (!node.isConnected && shown) {
      shown = false;
      view.detaching();
    }
  }, ATTACH_POLL_MS);
  return () => {
    window.clearInterval(watch);
    model.off('msg:custom', onMessage);
    channel.close();
    view.dispose();
  };
}

export default { render };

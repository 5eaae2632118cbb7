/**
 * The rule for links an App asks to open (`ui/open-link`), in every front
 * end: only http(s), never opened by themselves, shown whole with the host
 * the browser will visit before the user agrees, opened without an opener.
 * The lab asks in a JupyterLab dialog (links.ts), the widget front end in
 * the output itself (../widget/app_widget.ts); both build on these.
 */

import { APP_LINK_HOST_CLASS } from './data';

/** The link as the browser reads it, or null for anything but http(s) (refused without asking). */
export function readLink(url: unknown): URL | null {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    console.warn('mcp-notebook: an App asked to open a non-http(s) link; refused');
    return null;
  }
  return parsed;
}

/** What the user is shown before agreeing: the whole URL and, highlighted, the host it goes to (text nodes only). */
export function linkQuestion(url: unknown, parsed: URL): HTMLElement {
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
  return body;
}

/** Open an agreed link in a new tab, without an opener or a referrer. */
export function openAgreedLink(parsed: URL): void {
  window.open(parsed.href, '_blank', 'noopener,noreferrer');
}

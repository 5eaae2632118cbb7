/**
 * Links an App asks to open (`ui/open-link`): never opened by themselves.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { APP_LINK_HOST_CLASS } from './data';

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

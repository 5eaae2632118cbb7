/**
 * MCP Apps (`io.modelcontextprotocol/ui`) in notebook outputs: the output's
 * data and the names the renderer uses.
 *
 * The kernel displays, for a tool call whose tool has an App, an output
 * bundle of MIME type `application/vnd.mcp-notebook.app+json`:
 *
 *     {v: 1, app: ID, server, tool, uri, tool_input, tool_result, sig}
 *
 * next to `text/plain` (the tool's text result, the fallback).  The renderer
 * (`output.ts`) asks the notebook's kernel for the App over the
 * `mcp_notebook` comm (`hub.ts`) and shows it in a sandboxed iframe under
 * the App's checked policy (`csp.ts`), talking to it with ext-apps'
 * AppBridge; links the App asks for open only after a dialog (`links.ts`).
 */

import { isObject, JSONObject, str } from '../common';

/** MIME type of an App output. */
export const APP_MIME = 'application/vnd.mcp-notebook.app+json';

/**
 * Renderer rank: above HTML (50), markdown (60), text/plain (120) and the
 * widget view (-10): a report made while the page had not answered yet
 * carries the App both ways (this MIME type and the widget of
 * ../widget/app_widget.ts), and where the extension runs it renders this one.
 */
export const APP_RANK = -20;

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

"use strict";(self.rspackChunkmcp_notebook=self.rspackChunkmcp_notebook||[]).push([[700],{52(o,e,t){var r=t(601),n=t.n(r),a=t(314),p=(t.n(a))()(n());p.push([o.id,`/* mcp-notebook: an MCP App in a cell output (src/apps/view.ts), in the labextension and in the widget front end. */

.mcp-notebook-app {
  display: block;
  width: 100%;
  box-sizing: border-box;
  padding: 2px 0;
}

.mcp-notebook-app > .mcp-notebook-app-status {
  margin: 0 0 2px;
  color: var(--jp-ui-font-color2, #616161);
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size0, 11px);
  line-height: 1.4;
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
  user-select: text;
}

.mcp-notebook-app > .mcp-notebook-app-note {
  margin: 0 0 2px;
  color: var(--jp-ui-font-color1, #000);
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  overflow-wrap: anywhere;
}

.mcp-notebook-app > .mcp-notebook-app-note:empty {
  display: none;
}

.mcp-notebook-app-frame {
  display: block;
  width: 100%;
  min-height: 20px;
  max-height: 2000px;
  border: none;
  background: transparent;
  color-scheme: normal;
}

.mcp-notebook-app.mcp-notebook-app-border .mcp-notebook-app-frame {
  border: var(--jp-border-width, 1px) solid var(--jp-border-color1, #bdbdbd);
  border-radius: 2px;
  box-sizing: border-box;
}

.mcp-notebook-app-fallback-text {
  margin: 0 0 6px;
  font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-code-font-size, 13px);
  white-space: pre-wrap;
  overflow-wrap: anywhere;
  user-select: text;
}

.mcp-notebook-app-fallback-row {
  display: flex;
  align-items: center;
  gap: 8px;
  flex-wrap: wrap;
}

.mcp-notebook-app-fallback-note {
  color: var(--jp-ui-font-color2, #616161);
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  overflow-wrap: anywhere;
}

.mcp-notebook-app-activate:disabled {
  cursor: not-allowed;
  opacity: 0.6;
}

/* The tool's text result under a live App: folded (open when the App did not start). */
.mcp-notebook-app-result {
  margin: 2px 0 0;
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size0, 11px);
  color: var(--jp-ui-font-color2, #616161);
}

.mcp-notebook-app-result > summary {
  cursor: pointer;
}

.mcp-notebook-app-result-text {
  margin: 2px 0 0;
  max-height: 20em;
  overflow: auto;
  font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-code-font-size, 13px);
  color: var(--jp-content-font-color1, #000);
  white-space: pre-wrap;
  overflow-wrap: anywhere;
  user-select: text;
}

/* A stale App (its kernel is gone): covered and inert. */
.mcp-notebook-app.mcp-notebook-stale .mcp-notebook-app-frame {
  pointer-events: none;
  opacity: 0.45;
  filter: grayscale(1);
}

/* The link an App asks to open: the host as the browser reads it. */
.mcp-notebook-app-link-url {
  font-family: var(--jp-code-font-family, monospace);
  overflow-wrap: anywhere;
  user-select: text;
}

.mcp-notebook-app-link-host {
  padding: 0 3px;
  border-radius: 2px;
  background: color-mix(in srgb, var(--jp-warn-color1, #f57c00) 25%, var(--jp-layout-color1, #fff));
  color: var(--jp-ui-font-color1, #000);
  font-family: var(--jp-code-font-family, monospace);
  overflow-wrap: anywhere;
}

/* The widget front end asks about a link in the output itself (src/widget/app_widget.ts). */
.mcp-notebook-app-link-ask {
  margin: 4px 0;
  padding: 6px 8px;
  border: 1px solid var(--jp-warn-color1, #f57c00);
  border-radius: 2px;
  background: var(--jp-layout-color1, #fff);
}

.mcp-notebook-app-link-ask button {
  margin-right: 6px;
}
`,""]),t.d(e,{},{A:p})},646(o,e,t){var r=t(601),n=t.n(r),a=t(314),p=t.n(a),i=t(52),c=t(535),s=p()(n());s.i(i.A),s.i(c.A),s.push([o.id,`/* mcp-notebook: cells that started an MCP flow which waits for input.
   Every colour here is JupyterLab's (its CSS variables): a tint is the accent mixed into the page's
   background, and the text on it the page's text colour, so it reads in Light, Dark and any theme
   (a fixed pale tint under Dark's near-white text did not). */

.jp-Cell.mcp-notebook-waiting {
  box-shadow: inset 3px 0 0 var(--jp-warn-color1, #f57c00);
}

.jp-Cell.mcp-notebook-waiting > .mcp-notebook-badge {
  display: block;
  margin: 0 0 2px var(--jp-cell-collapser-width, 8px);
  padding: 1px 6px;
  width: fit-content;
  max-width: 100%;
  box-sizing: border-box;
  border-radius: 3px;
  background: color-mix(in srgb, var(--jp-warn-color1, #f57c00) 25%, var(--jp-layout-color1, #fff));
  color: var(--jp-ui-font-color1, #000);
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size0, 11px);
  line-height: 1.4;
  white-space: pre-line;
  overflow-wrap: anywhere;
  user-select: text;
}

.jp-Cell:not(.mcp-notebook-waiting) > .mcp-notebook-badge {
  display: none;
}

/* mcp-notebook: a form or panel whose kernel restarted, stopped or was replaced. */

.mcp-notebook-form.mcp-notebook-stale > .mcp-notebook-stale-banner {
  display: block;
  margin: 0 0 6px;
  padding: 4px 8px;
  border-left: 3px solid var(--jp-error-color1, #d32f2f);
  border-radius: 2px;
  background: color-mix(in srgb, var(--jp-error-color1, #d32f2f) 20%, var(--jp-layout-color1, #fff));
  color: var(--jp-ui-font-color1, #000);
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  line-height: 1.4;
  white-space: normal;
  overflow-wrap: anywhere;
  user-select: text;
}

.mcp-notebook-stale-banner > code {
  font-family: var(--jp-code-font-family, monospace);
  background: none;
  padding: 0;
}

.mcp-notebook-form.mcp-notebook-stale button:disabled,
.mcp-notebook-form.mcp-notebook-stale input:disabled,
.mcp-notebook-form.mcp-notebook-stale select:disabled,
.mcp-notebook-form.mcp-notebook-stale textarea:disabled {
  cursor: not-allowed;
  opacity: 0.6;
}

/* ipywidgets puts a broken-link icon on every disconnected widget; the banner says it once, in words. */
.mcp-notebook-stale.jupyter-widgets-disconnected::before,
.mcp-notebook-stale .jupyter-widgets-disconnected::before {
  content: none;
  display: none;
}

/* A notebook that is not trusted: its saved widget code was not loaded (widget_guard.ts). */
.mcp-notebook-widget-state-notice {
  display: flex;
  gap: 8px;
  align-items: flex-start;
  padding: 4px 8px;
  background: color-mix(in srgb, var(--jp-warn-color1, #f57c00) 25%, var(--jp-layout-color1, #fff));
  color: var(--jp-ui-font-color1, #000);
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  line-height: 1.4;
  overflow-wrap: anywhere;
  user-select: text;
}

.mcp-notebook-widget-state-notice > span {
  flex: 1 1 auto;
}

.mcp-notebook-widget-state-notice > button {
  flex: 0 0 auto;
  white-space: nowrap;
}
`,""]),t.d(e,{},{A:s})},535(o,e,t){var r=t(601),n=t.n(r),a=t(314),p=(t.n(a))()(n());p.push([o.id,`/* mcp-notebook: the look of its outputs (.mcpnb), the same rules as OUTPUT_CSS in
   mcp_notebook/notebook/display.py (a test keeps them equal). An output's own \\3c style> is dropped by
   JupyterLab's sanitizer when a notebook is reopened untrusted; its classes stay, and these rules style it. */

.mcpnb {
  font-family: var(--jp-ui-font-family,sans-serif);
  font-size: 13px;
  color: var(--jp-content-font-color1,inherit);
}

.mcpnb .hdr {
  color: var(--jp-ui-font-color2,#616161);
  margin-bottom: 4px;
}

.mcpnb .err {
  border-left: 4px solid var(--jp-error-color1,#d32f2f);
  background: color-mix(in srgb,var(--jp-error-color1,#d32f2f) 10%,transparent);
  padding: 4px 8px;
  white-space: pre-wrap;
}

.mcpnb .note {
  color: var(--jp-ui-font-color2,#616161);
  font-style: italic;
}

.mcpnb pre {
  margin: 2px 0;
  white-space: pre-wrap;
}

.mcpnb table {
  border-collapse: collapse;
}

.mcpnb td,
.mcpnb th {
  padding: 2px 8px;
  text-align: left;
  vertical-align: top;
  border-bottom: 1px solid var(--jp-border-color2,#e0e0e0);
}

.mcpnb .badge {
  display: inline-block;
  border-radius: 8px;
  padding: 0 6px;
  font-size: 11px;
  color: var(--jp-ui-font-color1,#000);
  border: 1px solid var(--mcpnb-state,var(--jp-border-color1,#bdbdbd));
  background: color-mix(in srgb,var(--mcpnb-state,var(--jp-border-color1,#bdbdbd)) 25%,var(--jp-layout-color1,#fff));
}

.mcpnb .badge.running {
  --mcpnb-state: var(--jp-brand-color1,#1976d2);
}

.mcpnb .badge.waiting {
  --mcpnb-state: var(--jp-warn-color1,#f57c00);
}

.mcpnb .badge.done {
  --mcpnb-state: var(--jp-success-color1,#388e3c);
}

.mcpnb .badge.failed,
.mcpnb .badge.error {
  --mcpnb-state: var(--jp-error-color1,#d32f2f);
}

.mcpnb .badge.cancelled {
  --mcpnb-state: var(--jp-border-color1,#bdbdbd);
}

.mcpnb .to-server {
  color: var(--jp-content-link-color,#0d47a1);
}

.mcpnb .to-client {
  color: var(--jp-mirror-editor-string-color,#ba2121);
}

.mcpnb .scroll {
  max-height: 32em;
  overflow-y: auto;
}

.mcpnb .scroll th {
  position: sticky;
  top: 0;
  background: var(--jp-layout-color1,#fff);
}

.mcpnb details.fold>summary {
  cursor: pointer;
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
  max-width: 48em;
}

.mcpnb details.fold[open]>summary {
  white-space: normal;
}

.mcpnb details.fold>div {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
  max-width: 60em;
}

.mcpnb pre.box {
  max-height: 30em;
  overflow: auto;
  resize: vertical;
  border: 1px solid var(--jp-border-color2,#e0e0e0);
  padding: 4px;
}
`,""]),t.d(e,{},{A:p})},314(o){o.exports=function(o){var e=[];return e.toString=function(){return this.map(function(e){var t="",r=void 0!==e[5];return e[4]&&(t+="@supports (".concat(e[4],") {")),e[2]&&(t+="@media ".concat(e[2]," {")),r&&(t+="@layer".concat(e[5].length>0?" ".concat(e[5]):""," {")),t+=o(e),r&&(t+="}"),e[2]&&(t+="}"),e[4]&&(t+="}"),t}).join("")},e.i=function(o,t,r,n,a){"string"==typeof o&&(o=[[null,o,void 0]]);var p={};if(r)for(var i=0;i<this.length;i++){var c=this[i][0];null!=c&&(p[c]=!0)}for(var s=0;s<o.length;s++){var l=[].concat(o[s]);r&&p[l[0]]||(void 0!==a&&(void 0===l[5]||(l[1]="@layer".concat(l[5].length>0?" ".concat(l[5]):""," {").concat(l[1],"}")),l[5]=a),t&&(l[2]&&(l[1]="@media ".concat(l[2]," {").concat(l[1],"}")),l[2]=t),n&&(l[4]?(l[1]="@supports (".concat(l[4],") {").concat(l[1],"}"),l[4]=n):l[4]="".concat(n)),e.push(l))}},e}},601(o){o.exports=function(o){return o[1]}},72(o){var e=[];function t(o){for(var t=-1,r=0;r<e.length;r++)if(e[r].identifier===o){t=r;break}return t}function r(o,r){for(var n={},a=[],p=0;p<o.length;p++){var i=o[p],c=r.base?i[0]+r.base:i[0],s=n[c]||0,l="".concat(c," ").concat(s);n[c]=s+1;var d=t(l),f={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==d)e[d].references++,e[d].updater(f);else{var m=function(o,e){var t=e.domAPI(e);return t.update(o),function(e){e?(e.css!==o.css||e.media!==o.media||e.sourceMap!==o.sourceMap||e.supports!==o.supports||e.layer!==o.layer)&&t.update(o=e):t.remove()}}(f,r);r.byIndex=p,e.splice(p,0,{identifier:l,updater:m,references:1})}a.push(l)}return a}o.exports=function(o,n){var a=r(o=o||[],n=n||{});return function(o){o=o||[];for(var p=0;p<a.length;p++){var i=t(a[p]);e[i].references--}for(var c=r(o,n),s=0;s<a.length;s++){var l=t(a[s]);0===e[l].references&&(e[l].updater(),e.splice(l,1))}a=c}}},659(o){var e={};o.exports=function(o,t){var r=function(o){if(void 0===e[o]){var t=document.querySelector(o);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(o){t=null}e[o]=t}return e[o]}(o);if(!r)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");r.appendChild(t)}},540(o){o.exports=function(o){var e=document.createElement("style");return o.setAttributes(e,o.attributes),o.insert(e,o.options),e}},56(o,e,t){o.exports=function(o){var e=t.nc;e&&o.setAttribute("nonce",e)}},206(o){o.exports=function(o){if("u"<typeof document)return{update:function(){},remove:function(){}};var e=o.insertStyleElement(o);return{update:function(t){var r,n,a;r="",t.supports&&(r+="@supports (".concat(t.supports,") {")),t.media&&(r+="@media ".concat(t.media," {")),(n=void 0!==t.layer)&&(r+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),r+=t.css,n&&(r+="}"),t.media&&(r+="}"),t.supports&&(r+="}"),(a=t.sourceMap)&&"u">typeof btoa&&(r+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(a))))," */")),o.styleTagTransform(r,e,o.options)},remove:function(){var o;null===(o=e).parentNode||o.parentNode.removeChild(o)}}}},113(o){o.exports=function(o,e){if(e.styleSheet)e.styleSheet.cssText=o;else{for(;e.firstChild;)e.removeChild(e.firstChild);e.appendChild(document.createTextNode(o))}}},959(o,e,t){var r=t(72),n=t.n(r),a=t(206),p=t.n(a),i=t(659),c=t.n(i),s=t(56),l=t.n(s),d=t(540),f=t.n(d),m=t(113),b=t.n(m),u=t(646),v={};v.styleTagTransform=b(),v.setAttributes=l(),v.insert=c().bind(null,"head"),v.domAPI=p(),v.insertStyleElement=f(),n()(u.A,v),u.A&&u.A.locals&&u.A.locals}}]);
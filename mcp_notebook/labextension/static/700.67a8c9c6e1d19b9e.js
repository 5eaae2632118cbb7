"use strict";(self.rspackChunkmcp_notebook=self.rspackChunkmcp_notebook||[]).push([[700],{646(e,o,t){var n=t(601),r=t.n(n),a=t(314),i=(t.n(a))()(r());i.push([e.id,`/* mcp-notebook: cells that started an MCP flow which waits for input. */

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
  background: var(--jp-warn-color3, #ffe0b2);
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
  background: var(--jp-error-color3, #ffcdd2);
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
`,""]),t.d(o,{},{A:i})},314(e){e.exports=function(e){var o=[];return o.toString=function(){return this.map(function(o){var t="",n=void 0!==o[5];return o[4]&&(t+="@supports (".concat(o[4],") {")),o[2]&&(t+="@media ".concat(o[2]," {")),n&&(t+="@layer".concat(o[5].length>0?" ".concat(o[5]):""," {")),t+=e(o),n&&(t+="}"),o[2]&&(t+="}"),o[4]&&(t+="}"),t}).join("")},o.i=function(e,t,n,r,a){"string"==typeof e&&(e=[[null,e,void 0]]);var i={};if(n)for(var c=0;c<this.length;c++){var s=this[c][0];null!=s&&(i[s]=!0)}for(var p=0;p<e.length;p++){var l=[].concat(e[p]);n&&i[l[0]]||(void 0!==a&&(void 0===l[5]||(l[1]="@layer".concat(l[5].length>0?" ".concat(l[5]):""," {").concat(l[1],"}")),l[5]=a),t&&(l[2]&&(l[1]="@media ".concat(l[2]," {").concat(l[1],"}")),l[2]=t),r&&(l[4]?(l[1]="@supports (".concat(l[4],") {").concat(l[1],"}"),l[4]=r):l[4]="".concat(r)),o.push(l))}},o}},601(e){e.exports=function(e){return e[1]}},72(e){var o=[];function t(e){for(var t=-1,n=0;n<o.length;n++)if(o[n].identifier===e){t=n;break}return t}function n(e,n){for(var r={},a=[],i=0;i<e.length;i++){var c=e[i],s=n.base?c[0]+n.base:c[0],p=r[s]||0,l="".concat(s," ").concat(p);r[s]=p+1;var d=t(l),u={css:c[1],media:c[2],sourceMap:c[3],supports:c[4],layer:c[5]};if(-1!==d)o[d].references++,o[d].updater(u);else{var f=function(e,o){var t=o.domAPI(o);return t.update(e),function(o){o?(o.css!==e.css||o.media!==e.media||o.sourceMap!==e.sourceMap||o.supports!==e.supports||o.layer!==e.layer)&&t.update(e=o):t.remove()}}(u,n);n.byIndex=i,o.splice(i,0,{identifier:l,updater:f,references:1})}a.push(l)}return a}e.exports=function(e,r){var a=n(e=e||[],r=r||{});return function(e){e=e||[];for(var i=0;i<a.length;i++){var c=t(a[i]);o[c].references--}for(var s=n(e,r),p=0;p<a.length;p++){var l=t(a[p]);0===o[l].references&&(o[l].updater(),o.splice(l,1))}a=s}}},659(e){var o={};e.exports=function(e,t){var n=function(e){if(void 0===o[e]){var t=document.querySelector(e);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(e){t=null}o[e]=t}return o[e]}(e);if(!n)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");n.appendChild(t)}},540(e){e.exports=function(e){var o=document.createElement("style");return e.setAttributes(o,e.attributes),e.insert(o,e.options),o}},56(e,o,t){e.exports=function(e){var o=t.nc;o&&e.setAttribute("nonce",o)}},206(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var o=e.insertStyleElement(e);return{update:function(t){var n,r,a;n="",t.supports&&(n+="@supports (".concat(t.supports,") {")),t.media&&(n+="@media ".concat(t.media," {")),(r=void 0!==t.layer)&&(n+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),n+=t.css,r&&(n+="}"),t.media&&(n+="}"),t.supports&&(n+="}"),(a=t.sourceMap)&&"u">typeof btoa&&(n+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(a))))," */")),e.styleTagTransform(n,o,e.options)},remove:function(){var e;null===(e=o).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,o){if(o.styleSheet)o.styleSheet.cssText=e;else{for(;o.firstChild;)o.removeChild(o.firstChild);o.appendChild(document.createTextNode(e))}}},959(e,o,t){var n=t(72),r=t.n(n),a=t(206),i=t.n(a),c=t(659),s=t.n(c),p=t(56),l=t.n(p),d=t(540),u=t.n(d),f=t(113),m=t.n(f),b=t(646),v={};v.styleTagTransform=m(),v.setAttributes=l(),v.insert=s().bind(null,"head"),v.domAPI=i(),v.insertStyleElement=u(),r()(b.A,v),b.A&&b.A.locals&&b.A.locals}}]);
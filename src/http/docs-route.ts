import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { json } from './http-io.js';

/**
 * /docs: the gateway's OpenAPI document (/openapi.json) in Swagger UI, whose "Try it out"
 * calls the tools from the page. Every file comes from the installed swagger-ui-dist
 * package, and the page's content security policy lets it reach this origin only: it loads
 * nothing from, and sends nothing to, anywhere else.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toolwire tools</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', validatorUrl: null, tryItOutEnabled: true, displayRequestDuration: true });\n`;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

let assetDir: string | undefined;
const cache = new Map<string, Buffer>();

function send(res: ServerResponse, type: string, body: string | Buffer): void {
  res.writeHead(200, { 'content-type': type, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' });
  res.end(body);
}

/** GET /docs and the files under it; a path it does not serve is a 404. */
export async function docs(res: ServerResponse, pathname: string): Promise<void> {
  if (pathname === '/docs' || pathname === '/docs/') return send(res, 'text/html; charset=utf-8', PAGE);
  if (pathname === '/docs/init.js') return send(res, 'text/javascript; charset=utf-8', INIT);
  const name = pathname.slice('/docs/'.length);
  const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!type) return json(res, 404, { error: `no route GET ${pathname}` });
  let body = cache.get(name);
  if (!body) {
    assetDir ??= dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    body = await readFile(join(assetDir, name));
    cache.set(name, body);
  }
  send(res, type, body);
}

// The built site served on loopback as GitHub Pages serves it: HTTP/2 over TLS, text files
// gzipped, `Cache-Control: max-age=600`, under the path prefix of site_url, 404.html for a
// missing file. Used by bench_lighthouse.py, which makes a throwaway certificate for it.
//
// usage: node serve_pages.mjs SITE PORT PREFIX KEY CERT   (prints "ready" once listening)
import fs from "node:fs";
import http2 from "node:http2";
import path from "node:path";
import zlib from "node:zlib";

const [site, port, prefix, key, cert] = process.argv.slice(2);
if (!site || !port || !prefix || !key || !cert) {
  console.error("usage: node serve_pages.mjs SITE PORT PREFIX KEY CERT");
  process.exit(2);
}
const root = path.resolve(site);
const TYPES = {
  ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
  ".json": "application/json", ".svg": "image/svg+xml", ".xml": "application/xml", ".txt": "text/plain; charset=utf-8",
  ".map": "application/json", ".ipynb": "application/json", ".py": "text/plain; charset=utf-8",
  ".woff": "font/woff", ".woff2": "font/woff2", ".png": "image/png", ".ico": "image/x-icon", ".gz": "application/gzip",
};
const COMPRESSIBLE = new Set([".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb", ".py"]);

function send(req, res, status, file) {
  let body = fs.readFileSync(file);
  const ext = path.extname(file);
  const headers = {"content-type": TYPES[ext] || "application/octet-stream", "cache-control": "max-age=600",
                   "vary": "Accept-Encoding"};
  if (COMPRESSIBLE.has(ext) && /\bgzip\b/.test(req.headers["accept-encoding"] || "")) {
    body = zlib.gzipSync(body, {level: 6});
    headers["content-encoding"] = "gzip";
  }
  headers["content-length"] = body.length;
  res.writeHead(status, headers);
  res.end(body);
}

const server = http2.createSecureServer({key: fs.readFileSync(key), cert: fs.readFileSync(cert), allowHTTP1: true});
server.on("request", (req, res) => {
  const url = decodeURIComponent(req.url.split(/[?#]/)[0]);
  const missing = path.join(root, "404.html");
  if (!url.startsWith(prefix)) return send(req, res, 404, missing);
  let file = path.resolve(root, "." + url.slice(prefix.length - 1));
  if (file !== root && !file.startsWith(root + path.sep)) return send(req, res, 404, missing);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
    if (!url.endsWith("/")) {
      res.writeHead(301, {location: url + "/"});
      return res.end();
    }
    file = path.join(file, "index.html");
  }
  if (!fs.existsSync(file)) return send(req, res, 404, missing);
  send(req, res, 200, file);
});
server.listen(Number(port), "127.0.0.1", () => console.log("ready"));

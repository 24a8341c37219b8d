import { readFileSync, writeFileSync } from "node:fs";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The API of a running `cms serve` (make run): the dev server proxies to it.
const api = process.env.CMS_API ?? "http://127.0.0.1:8080";
let readme = "";

export default defineConfig({
  base: "/cms/",
  plugins: [
    react(),
    {
      // embedded/README.md keeps the folder, so `go build` works on a clean
      // checkout (the embed pattern needs it); the build empties the folder,
      // so put the README back.
      name: "keep-embedded-readme",
      buildStart() {
        readme = readFileSync("embedded/README.md", "utf8");
      },
      closeBundle() {
        writeFileSync("embedded/README.md", readme);
      },
    },
  ],
  build: {
    outDir: "embedded",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      "/api": { target: api, changeOrigin: false },
      "/openapi.json": api,
      "/readyz": api,
    },
  },
});

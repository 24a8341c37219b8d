import { writeFileSync } from "node:fs";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The API of a running `cms serve` (make run): the dev server proxies to it.
const api = process.env.CMS_API ?? "http://127.0.0.1:8080";

export default defineConfig({
  base: "/cms/",
  plugins: [
    react(),
    {
      // dist/.gitkeep keeps `go build` working on a clean checkout (the
      // embed pattern needs the folder); the build empties dist, so put it back.
      name: "keep-dist-placeholder",
      closeBundle() {
        writeFileSync("dist/.gitkeep", "");
      },
    },
  ],
  build: {
    outDir: "dist",
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

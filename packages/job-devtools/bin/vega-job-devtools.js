#!/usr/bin/env node
// The command's file lives outside dist/ so that installing the workspace can
// link it before anything is built (pnpm warned on a fresh clone); the
// command itself is built into dist/bin.js.
import '../dist/bin.js'

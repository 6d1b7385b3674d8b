#!/usr/bin/env node
// The workspace bin: runs src/main.ts on the repository's Node 24 from source (scripts/workspace-bin.mjs).
import { runFromSource } from "../../../scripts/workspace-bin.mjs"

runFromSource(new URL("../src/main.ts", import.meta.url))

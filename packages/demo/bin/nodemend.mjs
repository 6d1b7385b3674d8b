#!/usr/bin/env node
// The workspace bin: runs src/cli.mjs on the repository's Node 24 from source (scripts/workspace-bin.mjs).
import { runFromSource } from "../../../scripts/workspace-bin.mjs"

runFromSource(new URL("../src/cli.mjs", import.meta.url))

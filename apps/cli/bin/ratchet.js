#!/usr/bin/env node
// The installed `ratchet` command (package.json `bin`): the built CLI (`npm run build` writes dist/).
require('../dist/main.js').main();

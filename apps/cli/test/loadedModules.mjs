// Loaded with `node --import` by a test: names every module the process loads, one URL a line, in the file
// that DXS_LOADED_MODULES names (the hooks run on a thread of their own, see loadedModulesHooks.mjs).
import { register } from "node:module"

register("./loadedModulesHooks.mjs", import.meta.url)

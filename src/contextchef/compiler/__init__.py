"""The compile pipeline, written once as a flow of effects: `pipeline` (the compile state, the
runtime a chef keeps between compiles, and `compile_flow`), payload building
(`_payload_builder`), the development checks of `pipeline_checks=True` (`checks`) and the
prompt-cache section of a snapshot (`_cache_snapshot`).

The chef drives the flow (`drive_sync` / `drive_async`); nothing below the chef imports this
package.
"""

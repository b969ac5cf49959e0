"""Garden in the browser: the operator's memory and maintenance surface as a local web app.

`wardian garden serve` runs it (`wardian.web.server`). Pages are server-rendered from
sandboxed, autoescaped Jinja2 templates (`wardian.web.render`) over a small Starlette app
(`wardian.web.app`); a hand-written script only enhances plain forms. Every request passes
`wardian.web.guard` first: 127.0.0.1 only, a per-start access token, an exact Host header and
a CSRF token on every POST. The pages call only the application layer (`wardian.app.garden`,
`wardian.app.maintenance`), the same functions as the CLI.

Nothing here is imported by other commands: Starlette and uvicorn load only for `serve`.
"""

"""Secrets by shape, each with its near-misses, built at run time (made up for the tests).

`SHAPES` maps a shape to (secrets, near_misses): `secrets` are (text, value) pairs whose
`value` the scanner must find and a redaction must remove completely; `near_misses` are
texts of the same form that hold no credential and must not be flagged. Every shape has at
least 40 of each, from templates crossed with made-up values, so a rule has to cover the
form, not one sentence. The shapes:

* ``url``: credentials in connection URLs, any scheme, with and without a user name;
* ``password-between``: the word "password" in many languages with other words between it
  and the value ("the password for the box we share is X", "пароль от сервера: X");
* ``password-short``: ``pw``, ``pwd``, ``passwd``, ``p/w`` in prose and as assignments;
* ``basic-auth``: ``Authorization: Basic <base64 of user:password>`` and client flags
  (``curl -u user:pw``, ``mysql -pX``);
* ``user-pair``: a user name and password pair without a URL ("the login is admin / X").
"""

from __future__ import annotations

import base64
import random
import string

_RNG = random.Random(6060)
_SYMBOLS = "!#$%&*+?@^~"
_WORDS = ("Tiger", "Lumen", "Quartz", "Falke", "Nube", "Pietra", "Kasa", "Vento", "Zorro",
          "Birke", "Oliva", "Raven", "Delta", "Mango", "Perle", "Sable", "Nordik", "Cobalt")


def _password(i: int) -> str:
    """A made-up password of a common human shape: words, digits, a symbol (rotating)."""
    a, b = _RNG.sample(_WORDS, 2)
    digits = str(_RNG.randint(10, 9999))
    forms = (f"{a}{_SYMBOLS[i % len(_SYMBOLS)]}{b}{digits}", f"{a.lower()}{digits}{b}",
             f"{a}{digits}{_SYMBOLS[i % len(_SYMBOLS)]}", f"{a[0]}{digits}{b.lower()}-{a[1:]}",
             "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(12)))
    return forms[i % len(forms)]


def _cross(templates: list[str], *, per: int = 1) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for t in templates:
        for _ in range(per):
            value = _password(len(out))
            out.append((t.format(v=value, b64=""), value))
    return out


_URL = [
    "postgres://admin:{v}@db.internal/app", "postgresql://svc_ro:{v}@10.1.2.3:5432/metrics",
    "mysql://root:{v}@mysql.prod.local/shop", "redis://:{v}@cache:6379/2",
    "rediss://default:{v}@redis.example.net:6380", "mongodb+srv://app:{v}@cluster9.mongo.net/",
    "amqp://worker:{v}@rabbit:5672/vhost", "https://ci-bot:{v}@git.example.org/team/repo.git",
    "smtp://mailer:{v}@smtp.example.com:587", "ldap://cn=admin:{v}@ldap.corp:389",
    "sftp://backup:{v}@files.example.com/drop", "ftp://anon2:{v}@ftp.example.org",
    "connect to mssql://sa:{v}@sqlserver:1433 for the report",
    "the DSN is clickhouse://reader:{v}@ch.internal:9000/logs",
    "set BROKER_URL=amqps://celery:{v}@mq.example.com//",
    "psql 'postgres://analyst:{v}@warehouse/dwh?sslmode=require'",
    "use nats://relay:{v}@nats.local:4222", "the proxy is http://proxyuser:{v}@proxy:3128",
    "git remote add origin https://oauth2:{v}@gitlab.example.com/a/b.git",
    "DATABASE_URL=\"postgres://u1:{v}@db:5432/x\"",
]
_URL_NEAR = [
    "postgres://admin@db.internal/app", "postgresql://localhost:5432/metrics",
    "mysql://root:<password>@mysql.prod.local/shop", "redis://:${REDIS_PASSWORD}@cache:6379",
    "rediss://default@redis.example.net:6380", "mongodb+srv://app:****@cluster9.mongo.net/",
    "amqp://guest:guest@rabbit:5672/", "https://git.example.org/team/repo.git",
    "smtp://smtp.example.com:587", "ldap://ldap.corp:389/dc=corp",
    "sftp://backup@files.example.com/drop", "ftp://ftp.example.org/pub",
    "connect to mssql://sqlserver:1433 for the report",
    "the DSN is clickhouse://ch.internal:9000/logs",
    "set BROKER_URL=amqps://mq.example.com//", "psql 'postgres://warehouse/dwh?sslmode=require'",
    "use nats://nats.local:4222", "the proxy is http://proxy:3128",
    "git remote add origin git@gitlab.example.com:a/b.git", "DATABASE_URL=\"postgres://db:5432/x\"",
    "postgres://user:password@localhost/db", "mysql://app:changeme@localhost/app",
    "redis://:secret@localhost:6379", "https://user:xxxxxxxx@example.com/",
    "postgres://{{ user }}:{{ password }}@db/app", "http://localhost:8080/health?x=1",
    "see https://example.com/docs/auth#passwords", "ssh://git@github.com/org/repo.git",
    "the time is 10:30@office", "mailto:ops@example.com", "https://example.com:8443/login",
    "amqp://{user}:{password}@mq/", "postgres://admin:%(password)s@db/app",
    "Open http://127.0.0.1:5173/ in the browser.", "redis://cache:6379/0 is the default",
    "the wiki page https://wiki.example.com/Pass:Word@Home is old", "file:///tmp/x@y",
    "s3://bucket/path/to/key", "mysql://root:$MYSQL_ROOT_PASSWORD@db/app",
    "https://admin:admin@localhost:9000 (the local default)",
]
_BETWEEN = [
    "the password for the staging box we share is {v}",
    "Password for the reporting replica: {v}", "the admin password on prod is now {v}",
    "our wifi password at the office is {v}", "the root password of the old NAS = {v}",
    "La password di produzione è {v}", "la password del router è {v}",
    "Das Passwort für den Testserver ist {v}", "Das Passwort der Datenbank lautet {v}",
    "Passwort vom Build-Server: {v}", "le mot de passe du serveur est {v}",
    "mot de passe de la base : {v}", "la contraseña de la base de datos es {v}",
    "contraseña del servidor: {v}", "a senha do servidor de testes é {v}",
    "senha da VPN: {v}", "het wachtwoord van de testomgeving is {v}",
    "wachtwoord voor de NAS: {v}", "пароль от сервера: {v}", "пароль к базе — {v}",
    "пароль для деплоя: {v}", "hasło do serwera to {v}", "hasło do bazy: {v}",
    "lösenordet till servern är {v}", "lösenord för wifi: {v}",
    "salasana palvelimelle on {v}", "şifre sunucu için: {v}", "parola del server: {v}",
    "サーバーのパスワードは{v}です", "本番のパスワード：{v}", "服务器的密码是 {v}",
    "数据库密码为 {v}", "서버 비밀번호는 {v}", "the password we use for the VPN is {v}",
    "the shared password for the demo account will be {v}",
    "password for user deploy on ci: {v}", "Password of the backup archive -> {v}",
    "the Jenkins admin password is still {v}", "the password to the cold wallet is {v}",
    "Kennwort für das Archiv: {v}", "le mot de passe wifi est {v}",
]
_BETWEEN_NEAR = [
    "the password for the staging box is in the vault",
    "Password for the reporting replica: ask the DBA", "the admin password on prod is rotated",
    "our wifi password at the office is printed on the router", "the password manager is 1Password",
    "La password di produzione è nel vault", "la password del router è scaduta",
    "Das Passwort für den Testserver ist im Tresor", "Das Passwort der Datenbank lautet wie immer",
    "Passwort vom Build-Server: siehe Bitwarden", "le mot de passe du serveur est dans le coffre",
    "mot de passe de la base : voir Vault", "la contraseña de la base de datos es obligatoria",
    "contraseña del servidor: pregunta a Ana", "a senha do servidor de testes é a mesma",
    "senha da VPN: ver o cofre", "het wachtwoord van de testomgeving is verlopen",
    "wachtwoord voor de NAS: zie de kluis", "пароль от сервера: в хранилище",
    "пароль к базе — спросите админа", "пароль для деплоя лежит в Vault",
    "hasło do serwera to tajemnica", "hasło do bazy: w sejfie",
    "lösenordet till servern är hemligt", "lösenord för wifi: se lappen",
    "salasana palvelimelle on holvissa", "şifre sunucu için: kasada",
    "サーバーのパスワードは必須です", "本番のパスワード：金庫を参照", "服务器的密码是必需的",
    "数据库密码为空", "서버 비밀번호는 필수입니다",
    "the password we use for the VPN is in 1Password",
    "the password reset link is https://example.com/reset?id=42",
    "the password for user deploy is read from DB_PASSWORD",
    "Password of the backup archive -> see the runbook",
    "the password policy for admins is 16 characters", "the password hash for the admin is bcrypt",
    "the password length of the token is 32", "the password of user 42 was reset yesterday",
    "the password for the demo account is the same as on staging",
]
_SHORT = [
    "ssh root@10.0.0.5 with pw {v}", "pw: {v}", "PW={v}", "the pw is {v}", "new pw {v}",
    "wifi pw {v}", "db pw = {v}", "admin pw: {v}", "pw for the NAS is {v}", "p/w {v}",
    "p/w: {v}", "pwd: {v}", "the pwd is {v}", "PWD={v} ./deploy.sh", "passwd {v}",
    "passwd: {v}", "the passwd is {v}", "pass: {v}", "pass={v}", "the pass is {v}",
    "vpn pass {v}", "login with pw {v}", "PASS={v}", "MYSQL_PWD={v}", "redis_pass: {v}",
    "smtp_pw={v}", "pw -> {v}", "PW is {v}", "temp pw: {v}", "her pw was {v}",
    "master pw {v}", "root pw {v}", "router pw: {v}", "guest pw is {v}", "pw={v};",
    "user: ops pw: {v}", "the pw should be {v}", "wlan pw {v}", "sudo pw {v}", "pw '{v}'",
]
_SHORT_NEAR = [
    "ssh root@10.0.0.5 with the key", "pw: see vault", "PW=${PW}", "the pw is in 1Password",
    "new pw needed", "wifi pw on the fridge", "db pw = <secret>", "admin pw: ****",
    "pw for the NAS is on the sticker", "p/w reset done", "p/w: ask ops", "pwd: /home/ops",
    "the pwd is /srv/app", "PWD=$(pwd) ./deploy.sh", "passwd -l olduser",
    "passwd: all authentication tokens updated successfully", "the passwd file is /etc/passwd",
    "pass: true", "pass=false", "the pass is valid today", "vpn pass expired",
    "login with your pw", "PASS=1", "MYSQL_PWD=$MYSQL_PWD", "redis_pass: null",
    "smtp_pw=${SMTP_PW}", "pw -> vault", "PW is required", "temp pw: none", "her pw was weak",
    "the 5 pw rule limits widths", "run pwd to see the folder", "root pw expired",
    "router pw: default", "guest pw is empty", "pw=;", "user: ops pw: (none)",
    "the pw should be rotated", "wlan pw unknown", "sudo pw prompt appears",
    "pass the tests before merging", "it will pass on CI", "bypass the cache with -B",
]


def _b64(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _basic() -> tuple[list[tuple[str, str]], list[str]]:
    users = ("admin", "deploy", "ci", "grafana", "svc-backup", "ops", "jenkins", "alice")
    headers = ("Authorization: Basic {b}", "-H 'Authorization: Basic {b}'",
               "authorization: basic {b}", "the header is Basic {b}",
               "Proxy-Authorization: Basic {b}")
    secrets: list[tuple[str, str]] = []
    for i in range(25):
        b = _b64(users[i % len(users)], _password(i))
        secrets.append((headers[i % len(headers)].format(b=b), b))
    flags = ("curl -u {u}:{v} https://api.example.com", "curl --user {u}:{v} http://localhost",
             "mysql -u {u} -p{v} shop", "mysql -u{u} -p'{v}' -h db", "mysqldump -u {u} -p{v} x",
             "wget --password={v} --user={u} http://x", "http --auth {u}:{v} GET :8000")
    for i in range(21):
        v = _password(i + 7)
        secrets.append((flags[i % len(flags)].format(u=users[i % len(users)], v=v), v))
    near = [
        "Authorization: Basic $BASIC_AUTH", "Authorization: Basic <base64>",
        "Authorization: Bearer $TOKEN", "the header is Basic auth", "use Basic authentication",
        "authorization: basic realm=\"api\"", "WWW-Authenticate: Basic realm=\"x\"",
        "Basic plan costs 5 EUR", "curl -u $USER:$PASS https://api.example.com",
        "curl --user admin https://x (it prompts)", "mysql -u root -p shop (it prompts)",
        "mysql -u root -p -h db", "mysqldump -u app -p x > x.sql", "wget --user=ci http://x",
        "http --auth admin GET :8000", "docker run -p8080:80 nginx", "ssh -p2222 host",
        "python -m pytest -p no:cacheprovider", "tar -cpf a.tar dir", "curl -u : --negotiate x",
        "Basic {b} is an image".format(b=base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()),
        "the Basic tier has 3 seats", "Authorization: Basic ${CREDS}",
        "Authorization: Basic xxxxxxxxxxxx", "Basic usage: wardian memory save TEXT",
        "BASIC_AUTH_USER=admin", "grafana uses basic auth behind nginx",
        "curl -u \"$CI_USER:$CI_PASS\"", "mysql -uroot -p", "curl -u user:password http://x",
        "curl -u admin:admin http://localhost", "wget --password=$PW http://x",
        "the Basic Latin block is U+0000..U+007F", "Basic Auth is off in prod",
        "mysql -p$MYSQL_PASSWORD", "set -p to keep permissions", "mkdir -p build/out",
        "npm -p foo", "cp -p a b", "ls -la -p", "git log -p HEAD~2",
    ]
    return secrets, near


_PAIR = [
    "the login is admin / {v}", "login: deploy / {v}", "creds: deploy:{v}",
    "credentials are ops:{v}", "user ops, pass {v}", "username grafana password {v}",
    "user: svc_backup, password: {v}", "sign in as root with {v}", "log in as admin using {v}",
    "Zugangsdaten: admin / {v}", "Benutzer admin, Passwort {v}", "identifiants : admin / {v}",
    "utilisateur ci, mot de passe {v}", "credenciales: admin / {v}",
    "usuario deploy, contraseña {v}", "credenziali: admin / {v}", "utente ops password {v}",
    "логин admin, пароль {v}", "ログイン: admin / {v}", "账号 admin 密码 {v}",
    "the creds for staging are qa / {v}", "account: reporter / {v}", "login admin:{v}",
    "use the test account tester / {v}", "the login for grafana is admin:{v}",
]
_PAIR_NEAR = [
    "the login is admin / see vault", "login: deploy / SSO", "creds: deploy:(in vault)",
    "credentials are ops:<password>", "user ops, pass none", "username grafana password reset",
    "user: svc_backup, password: ${BACKUP_PW}", "sign in as root with your key",
    "log in as admin using SSO", "Zugangsdaten: siehe Tresor", "Benutzer admin, Passwort vergessen",
    "identifiants : voir le coffre", "utilisateur ci, mot de passe oublié",
    "credenciales: en el vault", "usuario deploy, contraseña incorrecta",
    "credenziali: nel vault", "utente ops password scaduta", "логин admin, пароль в хранилище",
    "ログイン: admin / SSO", "账号 admin 密码 已重置", "the creds for staging are in 1Password",
    "account: reporter / read-only", "login admin:admin", "use the test account tester / tester",
    "the login for grafana is admin:admin", "the login page is /auth/login",
    "login/logout buttons are on the right", "user/password fields are required",
    "credentials: see docs/ops.md", "the account 42/7 is closed", "login took 3/4 of the time",
    "user ops, pass the flag --dry-run", "sign in as root with sudo -i",
    "log in as admin using the web UI", "creds: aws sso login --profile dev",
    "login: 12/05/2026 10:32", "user: ops, group: wheel", "Credentials rotated on 2026-11-30",
    "the login flow is OAuth 2.0 / OIDC", "account: 1234-5678 / EUR",
]


def _shapes() -> dict[str, tuple[list[tuple[str, str]], list[str]]]:
    basic, basic_near = _basic()
    return {
        "url": (_cross(_URL, per=2), _URL_NEAR),
        "password-between": (_cross(_BETWEEN), _BETWEEN_NEAR),
        "password-short": (_cross(_SHORT), _SHORT_NEAR),
        "basic-auth": (basic, basic_near),
        "user-pair": (_cross(_PAIR, per=2), _PAIR_NEAR),
    }


SHAPES = _shapes()

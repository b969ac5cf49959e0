# ruff: noqa: E501  (a data file: one case per line reads best)
"""A held-out evaluation set for the secret scanner, written blind.

Written on 2026-12-06 by an engineer who had not opened the scanner
(``wardian.memory.secret_scan``), its corpus or any secret test in the repository, so none
of its patterns, keywords or thresholds shaped these inputs. Nothing may be tuned on it:
``bench/secret_heldout.py`` scores it as a measurement.

Two lists, both grouped by the same six shapes (``url``, ``password-prose``, ``pass-short``,
``basic-auth``, ``user-pair``, ``token``):

* `SECRETS` ``(shape, text, value)``: a sentence, note or command line as a coding agent's
  user might type it, holding the secret `value` exactly once.
* `NEAR_MISSES` ``(shape, text)``: texts that look like the same shape but hold no secret
  (placeholders, URLs without passwords, talk about passwords, flags without values,
  hashes, identifiers, units, other languages' false friends).

Every value is made up: drawn from a seeded `random.Random`, so the file is the same on every
import and no real credential is in it. Hosts use example domains or private addresses.
"""

from __future__ import annotations

import base64
import json
import random
import string

_RNG = random.Random(20261206)

_UPPER = string.ascii_uppercase
_LOWER = string.ascii_lowercase
_DIGITS = string.digits
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64URL = _ALNUM + "-_"

_WORDS = (
    "marmot", "quince", "lantern", "tundra", "walrus", "saffron", "pylon", "juniper",
    "kestrel", "harbor", "velvet", "copper", "nebula", "thistle", "garnet", "falcon",
    "pepper", "glacier", "mosaic", "orchid", "cobalt", "lemur", "prairie", "basalt",
)


def _pick(chars: str, n: int) -> str:
    return "".join(_RNG.choice(chars) for _ in range(n))


def _pw(symbols: str = "!$*%-_~@#", lo: int = 10, hi: int = 18) -> str:
    """A random password with upper, lower, digit and symbol characters."""
    n = _RNG.randint(lo, hi)
    chars = [_RNG.choice(_UPPER), _RNG.choice(_LOWER), _RNG.choice(_DIGITS), _RNG.choice(symbols)]
    chars += [_RNG.choice(_ALNUM + symbols) for _ in range(n - 4)]
    _RNG.shuffle(chars)
    return "".join(chars)


def _url_pw() -> str:
    """A password that may sit in a URL's userinfo as typed (sub-delims, sometimes %-escapes)."""
    value = _pw("!$*-_~", 10, 20)
    if _RNG.random() < 0.25:
        cut = _RNG.randint(1, len(value) - 1)
        value = value[:cut] + _RNG.choice(("%40", "%23", "%2F", "%3A")) + value[cut:]
    return value


def _memorable() -> str:
    """A human-made password: words, digits and a symbol (Kestrel-Harbor-42!)."""
    a, b = _RNG.sample(_WORDS, 2)
    sep = _RNG.choice(("-", "_", ".", "", "+"))
    return f"{a.capitalize()}{sep}{b.capitalize()}{_RNG.randint(10, 9999)}{_RNG.choice('!?$#*%&')}"


def _prose_pw() -> str:
    return _memorable() if _RNG.random() < 0.4 else _pw()


def _b64(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt() -> str:
    header = _b64url(json.dumps({"alg": _RNG.choice(("HS256", "RS256")), "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({
        "sub": _pick(_DIGITS, 10), "name": _RNG.choice(_WORDS), "iat": _RNG.randint(1_700_000_000, 1_800_000_000),
    }).encode())
    return f"{header}.{payload}.{_pick(_B64URL, 43)}"


def _uuid() -> str:
    h = _pick(_HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# --- SECRETS --------------------------------------------------------------------------------
# Each template holds {v} once; the generator draws the value put there.

_URL = [
    ("postgres://app:{v}@db.internal:5432/orders", _url_pw),
    ("DATABASE_URL=postgresql://reporting:{v}@10.0.3.17/analytics?sslmode=require", _url_pw),
    ("can you check why this fails: psql 'postgresql://max:{v}@free-tier.gcp-us-central1.cockroachlabs.example:26257/defaultdb'", _url_pw),
    ("mysql://root:{v}@localhost:3306/shop", _url_pw),
    ("SQLALCHEMY_DATABASE_URI = 'mysql+pymysql://etl:{v}@mysql-primary.corp.example:3306/warehouse'", _url_pw),
    ("the cache is at redis://:{v}@cache.example.net:6379/0", _url_pw),
    ("REDIS_URL=redis://default:{v}@redis-12345.c1.eu-west-1.example.cloud:12345", _url_pw),
    ("celery broker: rediss://:{v}@queue-cache.internal:6380/2", _url_pw),
    ("mongodb+srv://svc_reader:{v}@cluster0.ab1cd.mongodb.example.net/?retryWrites=true&w=majority", _url_pw),
    ("connect with mongodb://admin:{v}@mongo1:27017,mongo2:27017/?replicaSet=rs0&authSource=admin", _url_pw),
    ("amqp://billing:{v}@rabbit.local:5672/%2F", _url_pw),
    ("BROKER_URL = \"amqps://events:{v}@mq.example.org/prod-vhost\"", _url_pw),
    ("git clone https://ci-bot:{v}@git.example.com/team/infra.git", _url_pw),
    ("git remote set-url origin https://alice:{v}@github.com/alice/dotfiles.git", _url_pw),
    ("smtp://mailer:{v}@smtp.example.com:587", _url_pw),
    ("EMAIL_URL=smtps://alerts%40example.com:{v}@mail.example.com:465", _url_pw),
    ("the directory is ldaps://binduser:{v}@ldap.corp.example:636/dc=corp,dc=example", _url_pw),
    ("upload to sftp://deploy:{v}@files.example.com:22/uploads/incoming", _url_pw),
    ("ftp://mirror:{v}@ftp.example.com/pub/releases", _url_pw),
    ("jdbc:postgresql://db.internal:5432/app?user=app&password={v}&ssl=true", _url_pw),
    ("mssql://sa:{v}@sqlserver.local:1433/master", _url_pw),
    ("clickhouse://default:{v}@ch-node1:8123/default", _url_pw),
    ("my router is at http://admin:{v}@192.168.1.1/ but the page hangs", _url_pw),
    ("ELASTICSEARCH_URL=https://elastic:{v}@es01.internal:9200", _url_pw),
    ("nats://nats_user:{v}@nats.internal:4222", _url_pw),
    ("HTTPS_PROXY=http://proxyuser:{v}@squid.corp.example:3128", _url_pw),
    ("socks5://tunnel:{v}@proxy.example.net:1080", _url_pw),
    ("NEO4J_URI=neo4j+s://neo4j:{v}@abcd1234.databases.example.io", _url_pw),
    ("couch is up: http://admin:{v}@127.0.0.1:5984/_utils", _url_pw),
    ("pip install --index-url https://__token__:{v}@pypi.example.org/simple wardian-extras", _url_pw),
    ("the npm registry line is registry=https://builder:{v}@npm.example.com/", _url_pw),
    ("Die DB-URL für Staging ist postgres://staging:{v}@pg-staging.example.de:5432/shop", _url_pw),
    ("La cadena de conexión es mysql://ventas:{v}@10.20.0.8:3306/ventas", _url_pw),
    ("L'URL de la base : postgresql://compta:{v}@bdd.example.fr/compta", _url_pw),
    ("строка подключения: redis://worker:{v}@10.1.2.3:6379/1", _url_pw),
    ("接続先は mongodb://app:{v}@mongo.internal:27017/app です", _url_pw),
    ("数据库连接串：postgres://shop:{v}@db.example.cn:5432/shop", _url_pw),
    ("svn checkout svn+ssh://builder:{v}@svn.example.com/repos/trunk", _url_pw),
    ("influx at http://telegraf:{v}@influx.internal:8086/write?db=metrics", _url_pw),
    ("kafka ui: https://viewer:{v}@kafka-ui.internal.example", _url_pw),
    ("webdav: davs://nextcloud:{v}@cloud.example.org/remote.php/dav/files/nextcloud", _url_pw),
    ("postgres://etl_user:{v}@warehouse.example.com/etl  <- paste this into the dbt profile", _url_pw),
    ("  url: \"mysql://wp:{v}@mariadb:3306/wordpress\"", _url_pw),
    ("postgresql+asyncpg://api:{v}@pgbouncer.internal:6432/api", _url_pw),
]

_PASSWORD_PROSE = [
    # English
    ("the password for the staging box we share is {v}", _prose_pw),
    ("My wifi password is {v} if you need to test the captive portal", _prose_pw),
    ("I set the root password on the new VM to {v} for now", _prose_pw),
    ("the db password, which I rotated yesterday after the audit, is now {v}", _prose_pw),
    ("Use {v} as the password for the test admin account", _prose_pw),
    ("Password: {v}", _pw),
    ("remember: the grafana admin password is {v} until we wire up SSO", _prose_pw),
    # German
    ("Das Passwort für den Staging-Server ist {v}", _prose_pw),
    ("Passwort vom Jenkins-Admin lautet {v}, bitte nicht weitergeben", _prose_pw),
    ("Kennwort: {v}", _pw),
    # French
    ("Le mot de passe du serveur de préprod est {v}", _prose_pw),
    ("mot de passe de la base : {v}", _pw),
    # Spanish
    ("La contraseña del servidor de pruebas es {v}", _prose_pw),
    ("contraseña: {v} (la cambio el lunes)", _pw),
    # Italian
    ("La password di produzione è {v}", _prose_pw),
    ("la password dell'utente admin sul NAS in ufficio è {v}", _prose_pw),
    # Portuguese
    ("A senha do banco de homologação é {v}", _prose_pw),
    ("senha do roteador: {v}", _pw),
    # Dutch
    ("Het wachtwoord van de testomgeving is {v}", _prose_pw),
    ("wachtwoord voor de VPN: {v}", _pw),
    # Polish
    ("Hasło do serwera testowego to {v}", _prose_pw),
    ("hasło do bazy: {v}", _pw),
    # Swedish
    ("Lösenordet till byggservern är {v}", _prose_pw),
    ("lösenord för wifi: {v}", _pw),
    # Russian
    ("пароль от сервера: {v}", _pw),
    ("Пароль для админки на стейдже — {v}", _prose_pw),
    # Ukrainian
    ("Пароль до тестової бази: {v}", _pw),
    ("пароль від адмінки на проді — {v}", _prose_pw),
    # Turkish
    ("Test sunucusunun şifresi {v}", _prose_pw),
    ("Veritabanı parolası {v} olarak değiştirildi", _prose_pw),
    # Japanese
    ("ステージングサーバーのパスワードは {v} です", _prose_pw),
    ("パスワード：{v}", _pw),
    # Chinese
    ("测试服务器的密码是 {v}", _prose_pw),
    ("数据库密码：{v}", _pw),
    ("密碼是{v}，別外流", _pw),
    # Korean
    ("스테이징 서버 비밀번호는 {v} 입니다", _prose_pw),
    ("비밀번호: {v}", _pw),
    # Czech, Norwegian, Danish, Finnish, Greek, Hungarian, Romanian
    ("Heslo k testovacímu serveru je {v}", _prose_pw),
    ("Passordet til ruteren er {v}", _prose_pw),
    ("Adgangskoden til NAS'en er {v}", _prose_pw),
    ("Palvelimen salasana on {v}", _prose_pw),
    ("Ο κωδικός πρόσβασης για τον server είναι {v}", _prose_pw),
    ("A jelszó a teszt szerverhez: {v}", _pw),
    ("Parola pentru serverul de test este {v}", _prose_pw),
    # Vietnamese, Indonesian, Hindi, Arabic, Hebrew
    ("Mật khẩu của máy chủ thử nghiệm là {v}", _prose_pw),
    ("Kata sandi server staging adalah {v}", _prose_pw),
    ("सर्वर का पासवर्ड {v} है", _pw),
    ("كلمة المرور للخادم هي {v}", _pw),
    ("הסיסמה לשרת היא {v}", _pw),
]

_PASS_SHORT = [
    ("pw: {v}", _pw),
    ("pw is {v}", _prose_pw),
    ("the pw for grafana is {v}", _prose_pw),
    ("PW {v} (temporary, change it)", _pw),
    ("PW: {v}", _pw),
    ("pwd={v}", _pw),
    ("db pwd is {v}", _prose_pw),
    ("PWD: {v}", _pw),
    ("pass={v}", _pw),
    ("pass: {v}", _pw),
    ("admin pass is {v}", _prose_pw),
    ("passwd={v}", _pw),
    ("passwd: {v}", _pw),
    ("p/w {v}", _pw),
    ("p/w: {v}", _prose_pw),
    ("the p/w for the shared mailbox is {v}", _prose_pw),
    ("MYSQL_PWD={v}", _pw),
    ("DB_PASS={v}", _pw),
    ("REDIS_PASSWD={v}", _pw),
    ("smtp_pass = \"{v}\"", _pw),
    ("ldap_bind_pw={v}", _pw),
    ("export ADMIN_PW='{v}'", _pw),
    ("rabbitmq_pass: '{v}'", _pw),
    ("  db_passwd: {v}", _pw),
    ("PASS={v} ./deploy.sh", _pw),
    ("ftp pass {v}", _pw),
    ("wifi pw {v}", _prose_pw),
    ("new pwd for the kiosk is {v}", _prose_pw),
    ("vpn pw: {v} (expires friday)", _pw),
    ("cfg: host=db1 port=5432 pw={v}", _pw),
    ("settings.ini has pass = {v} under [mail]", _pw),
    ("PW für den Router: {v}", _prose_pw),
    ("le pw c'est {v}", _prose_pw),
    ("pwd do wifi: {v}", _pw),
    ("el pass del wifi es {v}", _prose_pw),
    ("il pw del nas è {v}", _prose_pw),
    ("pw van de printer: {v}", _pw),
    ("пасс от вайфая {v}", _prose_pw),
    ("PWは {v} です", _pw),
    ("pw是 {v}", _pw),
    ("pw는 {v} 입니다", _pw),
    ("ssid: office-guest / pw: {v}", _prose_pw),
    ("pass for the jump host: {v}", _pw),
]

_USERS = ("admin", "deploy", "ops", "root", "jenkins", "svc_backup", "qa", "reporter", "ci", "kiosk")


def _basic() -> str:
    return _b64(_RNG.choice(_USERS), _pw("!$*-_~@#", 8, 16))


_BASIC_AUTH = [
    ("Authorization: Basic {v}", _basic),
    ("curl -H \"Authorization: Basic {v}\" https://api.example.com/v1/health", _basic),
    ("authorization: basic {v}", _basic),
    ("headers = {\"Authorization\": \"Basic {v}\"}", _basic),
    ("Proxy-Authorization: Basic {v}", _basic),
    ("the webhook sends Authorization: Basic {v} and we reject it, why?", _basic),
    ("fetch(url, { headers: { Authorization: 'Basic {v}' } })", _basic),
    ("-H 'authorization: Basic {v}'", _basic),
    ("curl -u admin:{v} https://jenkins.internal/api/json", _pw),
    ("curl --user ci:{v} -X POST https://registry.example.com/v2/token", _pw),
    ("curl -u \"deploy:{v}\" -T build.zip https://artifacts.example.com/upload/", _pw),
    ("curl -su ops:{v} http://10.0.0.12:15672/api/queues", _pw),
    ("wget --http-user=bob --http-password={v} https://files.example.com/dump.sql.gz", _pw),
    ("mysql -u root -p'{v}' shop", _pw),
    ("mysql -uroot -p{v} -h 127.0.0.1", lambda: _pw("!*%-_~@#", 10, 16)),
    ("mysqldump -h db -u backup -p\"{v}\" --all-databases > all.sql", _pw),
    ("mysql --user=app --password={v} app < schema.sql", _pw),
    ("PGPASSWORD={v} psql -h db.internal -U app app", _pw),
    ("docker login -u ci --password {v} registry.example.com", _pw),
    ("mongosh --username admin --password {v} --authenticationDatabase admin", _pw),
    ("redis-cli -h cache.internal -a {v} ping", _pw),
    ("redis-cli --pass {v} -n 2 keys '*'", _pw),
    ("sshpass -p '{v}' ssh pi@192.168.0.40", _pw),
    ("htpasswd -b .htpasswd alice {v}", _pw),
    ("http --auth reporter:{v} GET https://api.example.com/reports", _pw),
    ("net use \\\\fileserver\\share /user:CORP\\bob {v}", _pw),
    ("rabbitmqctl add_user svc_orders {v}", _pw),
    ("openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{v}", _pw),
    ("keytool -importcert -file ca.pem -keystore truststore.jks -storepass {v}", _pw),
    ("kubectl create secret generic db --from-literal=password={v}", _pw),
    ("machine api.example.com login bot password {v}", _pw),
    ("vault login -method=userpass username=ops password={v}", _pw),
    ("az login -u ops@example.onmicrosoft.com -p {v}", _pw),
    ("helm repo add internal https://charts.example.com --username ci --password {v}", _pw),
    ("svn checkout https://svn.example.com/repos/app --username bob --password {v}", _pw),
    ("smbclient //fs01/share -U alice%{v}", lambda: _pw("!*-_~@#", 10, 16)),
    ("lftp -u uploader,{v} sftp://files.example.com", _pw),
    ("git -c http.extraHeader=\"Authorization: Basic {v}\" clone https://git.example.com/app.git", _basic),
    ("snowsql -a xy12345 -u loader --password {v}", _pw),
    ("influx -username admin -password {v} -execute 'SHOW DATABASES'", _pw),
    ("ansible-playbook site.yml -e ansible_become_password={v}", _pw),
    ("das Skript ruft curl -u monitor:{v} auf, und das schlägt fehl", _pw),
]

_USER_PAIR = [
    ("the login is admin / {v}", _prose_pw),
    ("creds: deploy:{v}", _pw),
    ("user ops, pass {v}", _pw),
    ("sign in as root with {v}", _prose_pw),
    ("username: grafana_admin password: {v}", _pw),
    ("login: jenkins pw: {v}", _pw),
    ("u/p: tester / {v}", _pw),
    ("user=svc_backup password={v}", _pw),
    ("Account: qa-team@example.com / {v}", _prose_pw),
    ("log in with kim.lee and {v}", _prose_pw),
    ("root / {v} on the new pi", _prose_pw),
    ("admin:{v} for the router admin page", _pw),
    ("I made you an account: alex / {v} (change it on first login)", _prose_pw),
    ("the test account is demo@example.com with password {v}", _prose_pw),
    ("username: app\npassword: {v}\n", _pw),
    ("{\"user\": \"ci\", \"pass\": \"{v}\"}", _pw),
    ("ssh in as pi, password {v}", _prose_pw),
    ("The Windows box: Administrator / {v}", _pw),
    ("sftp user uploads, pw {v}", _pw),
    ("credentials (user/pass): reporter/{v}", _pw),
    ("login as 'backup' using '{v}'", _pw),
    ("username ops-bot and password {v}", _pw),
    ("admin/{v}", _pw),
    ("user: root pass: {v}", _pw),
    ("the kiosk logs in as kiosk01 with {v}", _prose_pw),
    ("creds for the VPN are j.smith and {v}", _prose_pw),
    ("db user is reporting, its password {v}", _pw),
    ("Benutzer: admin, Passwort: {v}", _prose_pw),
    ("Login für den Testshop: kunde1 / {v}", _prose_pw),
    ("utilisateur admin, mot de passe {v}", _prose_pw),
    ("usuario: soporte / clave: {v}", _pw),
    ("utente backup con password {v}", _pw),
    ("usuário: suporte / senha: {v}", _pw),
    ("gebruiker beheer, wachtwoord {v}", _prose_pw),
    ("login: operator, hasło: {v}", _pw),
    ("användare: drift, lösenord: {v}", _pw),
    ("логин admin, пароль {v}", _pw),
    ("користувач deploy, пароль {v}", _pw),
    ("Kullanıcı adı: destek, şifre: {v}", _pw),
    ("ユーザー名 admin / パスワード {v}", _pw),
    ("用户名 root 密码 {v}", _pw),
    ("아이디 test01 비번 {v}", _pw),
    ("[client]\nuser=backup\npassword={v}\n", _pw),
    ("login admin, then {v} at the second prompt", _pw),
]

_TOKEN = [
    ("aws_access_key_id = {v}", lambda: "AKIA" + _pick(_UPPER + _DIGITS, 16)),
    ("AWS_SECRET_ACCESS_KEY={v}", lambda: _pick(_ALNUM + "+/", 40)),
    ("the secret access key for the backup user is {v}", lambda: _pick(_ALNUM + "+/", 40)),
    ("export GITHUB_TOKEN={v}", lambda: "ghp_" + _pick(_ALNUM, 36)),
    ("here is my PAT, it only has repo scope: {v}", lambda: "ghp_" + _pick(_ALNUM, 36)),
    ("gh auth login --with-token <<< {v}", lambda: "github_pat_" + _pick(_ALNUM, 22) + "_" + _pick(_ALNUM, 59)),
    ("the app installation token {v} expires in an hour", lambda: "ghs_" + _pick(_ALNUM, 36)),
    ("GITLAB_TOKEN: {v}", lambda: "glpat-" + _pick(_B64URL, 20)),
    ("use this gitlab token for the runner: {v}", lambda: "glpat-" + _pick(_B64URL, 20)),
    ("SLACK_BOT_TOKEN={v}", lambda: f"xoxb-{_pick(_DIGITS, 12)}-{_pick(_DIGITS, 13)}-{_pick(_ALNUM, 24)}"),
    ("slack user token: {v}", lambda: f"xoxp-{_pick(_DIGITS, 12)}-{_pick(_DIGITS, 12)}-{_pick(_DIGITS, 13)}-{_pick(_HEX, 32)}"),
    ("STRIPE_SECRET_KEY=\"{v}\"", lambda: "sk_live_" + _pick(_ALNUM, 24)),
    ("the live stripe key is {v}, test mode one is in the wiki", lambda: "sk_live_" + _pick(_ALNUM, 99)),
    ("restricted key for the reporting job: {v}", lambda: "rk_live_" + _pick(_ALNUM, 24)),
    ("OPENAI_API_KEY={v}", lambda: "sk-proj-" + _pick(_B64URL, 120)),
    ("my openai key {v} stopped working", lambda: "sk-" + _pick(_ALNUM, 48)),
    ("ANTHROPIC_API_KEY={v}", lambda: "sk-ant-api03-" + _pick(_B64URL, 93) + "AA"),
    ("client = anthropic.Anthropic(api_key=\"{v}\")", lambda: "sk-ant-api03-" + _pick(_B64URL, 93) + "AA"),
    ("maps key: {v}", lambda: "AIza" + _pick(_B64URL, 35)),
    ("GOOGLE_API_KEY={v}", lambda: "AIza" + _pick(_B64URL, 35)),
    ("Authorization: Bearer {v}", _jwt),
    ("this JWT from the staging login fails to verify: {v}", _jwt),
    ("session cookie: token={v}", _jwt),
    ("api key: {v}", lambda: _pick(_HEX, 32)),
    ("the api key for the weather service is {v}", lambda: _pick(_ALNUM, 32)),
    ("token {v}", lambda: _pick(_ALNUM, 40)),
    ("secret={v}", lambda: _pick(_HEX, 64)),
    ("X-Api-Key: {v}", lambda: _pick(_ALNUM, 48)),
    ("client_secret: {v}", lambda: _pick(_B64URL, 40)),
    ("DD_API_KEY={v}", lambda: _pick(_HEX, 32)),
    ("//registry.npmjs.org/:_authToken={v}", lambda: "npm_" + _pick(_ALNUM, 36)),
    ("HF_TOKEN={v}", lambda: "hf_" + _pick(_ALNUM, 34)),
    ("SENDGRID_API_KEY={v}", lambda: f"SG.{_pick(_B64URL, 22)}.{_pick(_B64URL, 43)}"),
    ("DIGITALOCEAN_TOKEN={v}", lambda: "dop_v1_" + _pick(_HEX, 64)),
    ("shopify admin token {v}", lambda: "shpat_" + _pick(_HEX, 32)),
    ("telegram bot token: {v}", lambda: f"{_pick(_DIGITS, 10)}:AA{_pick(_B64URL, 33)}"),
    ("DefaultEndpointsProtocol=https;AccountName=stbackups;AccountKey={v};EndpointSuffix=core.windows.net", lambda: _pick(_ALNUM + "+/", 86) + "=="),
    ("Der API-Schlüssel lautet {v}", lambda: _pick(_ALNUM, 40)),
    ("la clé API : {v}", lambda: _pick(_HEX, 40)),
    ("el token de acceso es {v}", lambda: _pick(_ALNUM, 36)),
    ("токен бота: {v}", lambda: _pick(_ALNUM, 44)),
    ("APIキーは {v} です", lambda: _pick(_ALNUM, 32)),
    ("API 密钥是 {v}", lambda: _pick(_HEX, 48)),
    ("pypi token {v}", lambda: "pypi-AgEIcHlwaS5vcmc" + _pick(_B64URL, 120)),
]


def _build(shape: str, templates: list) -> list[tuple[str, str, str]]:
    cases = []
    for template, gen in templates:
        value = gen()
        cases.append((shape, template.replace("{v}", value), value))
    return cases


SECRETS: list[tuple[str, str, str]] = [
    *_build("url", _URL),
    *_build("password-prose", _PASSWORD_PROSE),
    *_build("pass-short", _PASS_SHORT),
    *_build("basic-auth", _BASIC_AUTH),
    *_build("user-pair", _USER_PAIR),
    *_build("token", _TOKEN),
]
"""``(shape, text, value)``: `value` occurs exactly once in `text`."""

# --- NEAR MISSES ----------------------------------------------------------------------------
# Random-looking values that are not secrets: commit hashes, UUIDs, digests, image data.

_SHA1 = [_pick(_HEX, 40) for _ in range(6)]
_SHA256 = [_pick(_HEX, 64) for _ in range(3)]
_UUIDS = [_uuid() for _ in range(4)]
_PNG = "iVBORw0KGgoAAAANSUhEUgAA" + _pick(_ALNUM + "+/", 60)
_ULID = "01HZ" + _pick("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 22)

_URL_NEAR = [
    "postgres://app@db.internal:5432/orders",
    "postgres://localhost/test",
    "DATABASE_URL=postgresql://${DB_USER}:${DB_PASS}@${DB_HOST}:5432/app",
    "mysql://root:<password>@localhost:3306/shop",
    "redis://localhost:6379/0",
    "redis://:****@cache.example.net:6379/0",
    "mongodb+srv://<username>:<password>@cluster0.ab1cd.mongodb.example.net/",
    "amqp://rabbit.local:5672/%2F",
    "https://github.com/wardian/wardian.git",
    "git clone git@github.com:acme/infra.git",
    "ssh://git@gitlab.example.com:2222/group/repo.git",
    "smtp://smtp.example.com:587",
    "ldap://ldap.example.org/dc=example,dc=org?uid?sub?(objectClass=person)",
    "sftp://deploy@files.example.com/uploads",
    "postgres://postgres:changeme@localhost/dev is what the template ships; nobody uses it",
    "https://example.com/login?next=/dashboard&lang=en",
    "http://localhost:8080/api/v1/users?page=2&per_page=50",
    "the libpq format is postgresql://user:password@host:port/dbname",
    "mysql://user:xxxx@host/db",
    "jdbc:postgresql://db:5432/app?user=app&password=",
    "DATABASE_URL=postgres://app:${POSTGRES_PASSWORD}@db:5432/app",
    "url = \"redis://:%s@%s:%d/0\" % (password, host, port)",
    "dsn = f\"postgres://{user}:{password}@{host}/{db}\"",
    "http://[::1]:8000/metrics",
    "https://docs.example.com/guide#connection-strings",
    "mongodb://mongo1:27017,mongo2:27017/?replicaSet=rs0",
    f"https://api.example.com/v2/items/{_UUIDS[0]}",
    f"https://github.com/acme/infra/commit/{_SHA1[0]}",
    "https://alice@bitbucket.org/team/repo.git",
    "postgres://app:REDACTED@db.internal/orders",
    "postgresql://app:[REDACTED]@db.internal/orders",
    "http://user:@host.example/ has an empty password, which is why the login fails",
    "amqps://mq.example.org/prod-vhost",
    "s3://my-bucket/backups/2026-12-01.tar.gz",
    "file:///home/me/projects/notes.md",
    "ws://localhost:3000/socket?room=42",
    "Use the format scheme://user:PASSWORD@host:port/db",
    "https://www.example.com:443/path;param?q=1#frag",
    "Die Verbindungs-URL steht in der .env (postgres://…)",
    "La URL del repo es https://gitlab.example.com/equipo/api.git",
    "URL сервера: https://staging.example.ru:8443/admin",
    "接続先は redis://cache.internal:6379/1 です",
    "数据库地址 mysql://db.example.cn:3306/shop",
    "git clone https://github.com/acme/tools.git --depth 1",
    "smtp server smtp.example.com port 587 with STARTTLS",
    "L'URL publique est https://app.example.fr/connexion",
]

_PASSWORD_PROSE_NEAR = [
    "the password policy needs 14 characters",
    "reset your password via the link in the email",
    "password manager is 1Password",
    "I forgot my password again, can you reset it?",
    "The password field should be <input type=\"password\">",
    "The password is stored in Vault under secret/staging/db",
    "the password is in the usual place",
    "password: <password>",
    "Password: ********",
    "Password: ${DB_PASSWORD}",
    "the password must not contain the username",
    "Passwords expire after 90 days",
    "Never use 'password' as the password",
    "Set PASSWORD_MIN_LENGTH to 14",
    "the password reset token expires after 15 minutes",
    "we removed the password from the repo and rotated it",
    "The password prompt appears twice on macOS",
    "PasswordAuthentication no in sshd_config",
    "validatePassword() returns false for 13 characters",
    "the 'password' column is hashed with argon2id",
    "Das Passwort ist im Tresor",
    "Passwort vergessen? Link: /account/reset",
    "Passwort: siehe Tresor, Eintrag Jenkins",
    "Le mot de passe est dans le coffre-fort KeePass",
    "mot de passe : voir le gestionnaire",
    "Olvidé mi contraseña, ¿me la restableces?",
    "contraseña: la de siempre",
    "La password deve avere almeno 12 caratteri",
    "A senha está no cofre do time",
    "Het wachtwoord staat in Bitwarden",
    "Hasło musi mieć co najmniej 12 znaków",
    "hasło: zapytaj Kasię",
    "Lösenordet finns i 1Password-valvet",
    "Пароль лежит в KeePass, спроси у Олега",
    "пароль: см. в Vault",
    "Пароль має містити щонайменше 12 символів",
    "Şifreyi sıfırlamak için e-postadaki bağlantıyı kullan",
    "パスワードは1Passwordに保存してあります",
    "パスワード：未設定",
    "密码已经存到密码管理器里了",
    "密码：见1Password",
    "비밀번호는 보안 금고에 있습니다",
    "Heslo je v trezoru",
    "Passordet ligger i passordhvelvet",
    "Salasana on tallennettu Bitwardeniin",
    "Ο κωδικός πρόσβασης είναι στο Vault",
    "Mật khẩu nằm trong trình quản lý mật khẩu",
]

_PASS_SHORT_NEAR = [
    "pass the tests before merging",
    "the sensor draws about 40 pW in sleep mode",
    "a 120 pW signal is below the noise floor",
    "the pwd command prints /home/me/src",
    "cd $(pwd)/build && make",
    "PWD=/home/ci/builds/app",
    "pwd: /var/www/html",
    "pass: see vault",
    "pw: <pw>",
    "passwd: ****",
    "/etc/passwd lists the users, /etc/shadow the hashes",
    "run passwd to change it",
    "first pass of the review is done",
    "it's a two-pass compiler",
    "pass=true in the test summary",
    "DB_PASS=${DB_PASS}",
    "pwd = os.getcwd()",
    "power-to-weight (p/w) ratio is 0.12 kW/kg",
    "MYSQL_PWD is deprecated; use an option file",
    "pass insert work/jira",
    "pass show email/work | head -1",
    "PASS 142 FAIL 0 SKIP 3",
    "--pass-through mode forwards stdin",
    "bypass the cache with --no-cache",
    "passwd -l alice locks the account",
    "pw: changeme (default; the installer forces a change)",
    "passwd=xxxx",
    "PASS=<redacted>",
    "pass: ''",
    "pwd: none",
    "p/w: n/a",
    "p/w is in the vault",
    "pwsh -NoProfile -File build.ps1",
    "PW_TEST_HTML_REPORT_OPEN=never npx playwright test",
    "the pw tests are flaky on webkit",
    "Pass auf, dass die Tests grün sind",
    "Mein Pass läuft im März ab",
    "PW-Reset über das Self-Service-Portal",
    "le pass Navigo ne marche plus",
    "el pase de abordar está en el correo",
    "pw: chiedi a Giulia",
    "пасс в Vault",
    "PWはVaultにあります",
    "pw在1Password里",
    "pw는 금고에 있어요",
    "pass_count=14 fail_count=0",
]

_BASIC_AUTH_NEAR = [
    "Authorization: Basic <base64>",
    "Authorization: Basic ${CREDS}",
    "Authorization: Bearer $TOKEN",
    "curl -u \"$API_USER:$API_PASS\" https://api.example.com",
    "curl -u admin https://jenkins.internal/api/json",
    "mysql -u root -p shop",
    "mysql -uroot -p -h db.internal",
    "docker login --password-stdin registry.example.com < token.txt",
    "the --password flag is deprecated; use --password-stdin",
    "psql --password -h db.internal -U app",
    "pg_dump -W -h db.internal app > app.sql",
    f"<img src=\"data:image/png;base64,{_PNG}\">",
    "The logo is embedded as base64 (data:image/svg+xml;base64,...)",
    "basic auth is enabled on the staging ingress",
    "WWW-Authenticate: Basic realm=\"staging\"",
    "auth_basic \"Restricted\";",
    "auth_basic_user_file /etc/nginx/.htpasswd;",
    "htpasswd -c .htpasswd alice",
    "curl --negotiate -u : https://intranet.example.com",
    "redis-cli --askpass",
    "sshpass -f ~/.pwfile ssh host",
    "mysql --defaults-extra-file=~/.my.cnf app",
    "curl -p -x proxy.internal:3128 https://example.com",
    "mkdir -p build/out",
    "cp -p src/a.txt dst/",
    "docker run -p 8080:80 nginx",
    "ssh -p 2222 deploy@bastion.example.com",
    "echo -n 'hello world' | base64 gives aGVsbG8gd29ybGQ=",
    "the Basic scheme sends base64(user:pass), which is not encryption",
    "<script src=\"app.js\" integrity=\"sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC\"></script>",
    "--password-file /run/secrets/db",
    "--password=$(cat secret.txt)",
    "--password \"$DB_PASSWORD\"",
    "--password <PASSWORD>",
    "wget --ask-password https://files.example.com/dump.sql.gz",
    "mongosh --username admin --password",
    "mysql -u app -p\"$DB_PASS\" app",
    "openssl pkcs12 -in bundle.p12 -passin file:pass.txt",
    "keytool -list -keystore truststore.jks -storepass:env STOREPASS",
    "kubectl create secret generic db --from-file=password=./pw.txt",
    "Proxy-Authorization header is stripped by the gateway",
    "Basic-Auth ist auf Staging aktiv, Zugang im Tresor",
    "l'en-tête Authorization: Basic est ajouté par le proxy",
    "curl -u 用户名:密码 https://api.example.cn",
    "curl -u ユーザー名:パスワード https://api.example.jp",
    "curl -u usuario:contraseña https://api.example.es",
]

_USER_PAIR_NEAR = [
    "user admin has no password yet",
    "the login is admin / <password>",
    "creds: deploy:${DEPLOY_PASS}",
    "user ops, pass: ask Maria",
    "sign in as root with your SSH key",
    "sign in as root with the password from the vault",
    "username: grafana_admin (password in 1Password)",
    "login: jenkins, pw: see vault",
    "user=svc_backup password=",
    "admin / editor / viewer are the three roles",
    "chown www-data:www-data /var/www/html",
    "chown -R deploy:deploy /srv/app",
    "docker run -u 1000:1000 -v $PWD:/src builder",
    "labels: env:prod, team:payments",
    "image: nginx:1.25-alpine",
    "FROM python:3.12-slim",
    "the deploy finished at 12:45:09",
    "log in as alice / ******",
    "user root / pass ****",
    "username: <your-username> password: <your-password>",
    "username: $USER password: $PASS",
    "Sign in as the guest user; no password needed",
    "login: admin\npassword:\n",
    "credentials: see ticket OPS-2231",
    "user: admin / pass: (unchanged)",
    "open /admin/settings/users and add her",
    "/home/admin/.ssh/authorized_keys",
    "HTTP 401 for user deploy: invalid password",
    "Failed password for invalid user oracle from 203.0.113.7 port 52144 ssh2",
    "Accepted publickey for deploy from 198.51.100.4 port 50022 ssh2",
    "CREATE USER reporting WITH PASSWORD :'pw';",
    "ALTER USER app PASSWORD NULL;",
    "username/password login is disabled; use OIDC",
    "Benutzer admin, Passwort im Tresor",
    "utilisateur : admin, mot de passe : celui du coffre",
    "usuario: soporte, contraseña: la que te pasé por Signal",
    "utente backup, password da chiedere a Luca",
    "usuário admin ainda sem senha",
    "gebruiker beheer heeft nog geen wachtwoord",
    "логин admin, пароль стандартный из Vault",
    "Kullanıcı adı destek, şifre kasada",
    "ユーザー名 admin、パスワードは未設定",
    "用户名 root，密码为空",
    "아이디 test01, 비번은 금고에",
    "login: operator, hasło: w sejfie",
    "ratio admin:user is 1:40",
]

_TOKEN_NEAR = [
    f"fixed in commit {_SHA1[1]}",
    f"git revert {_SHA1[2]}",
    f"HEAD is now at {_SHA1[3][:7]} bump version",
    f"request id {_UUIDS[1]} failed with 502",
    f"tenant_id: {_UUIDS[2]}",
    "AbstractSingletonProxyFactoryBean is still on the classpath",
    "HttpRequestHeaderParserFactoryProvider",
    f"image: ghcr.io/acme/api@sha256:{_SHA256[0]}",
    f"sha256sum: {_SHA256[1]}  release.tar.gz",
    "the API key goes in ANTHROPIC_API_KEY, see .env.example",
    "OPENAI_API_KEY=sk-...",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "token: <your-token>",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "token expires in 3600 seconds",
    "the CSRF token is rotated on every request",
    "secret: see Vault path kv/app/prod",
    "npm token list shows two tokens",
    "api key rotation is every 90 days",
    "version 4.12.0-rc.3+build.5823",
    f"the file is at /var/lib/app/cache/3c/{_pick(_HEX, 32)}.json",
    "JWT header alg: RS256, kid: 2026-11-key",
    "every JWT starts with eyJ because of the JSON header",
    "Authorization: Bearer <token>",
    "Authorization: Bearer ${API_TOKEN}",
    "Stripe keys start with sk_live_ in prod and sk_test_ in dev",
    "Slack bot tokens start with xoxb- and user tokens with xoxp-",
    "the AIza prefix marks a Google API key",
    "glpat- tokens need the read_api scope",
    "context window of 200k tokens, 4096 max output tokens",
    "token count: 18342",
    "SECRET_KEY_BASE is generated by bin/rails credentials:edit",
    f"id: {_ULID}",
    f"ObjectId('{_pick(_HEX, 24)}')",
    "translation key checkout.payment.card_declined_message",
    "APIキーは環境変数 OPENAI_API_KEY に入れてください",
    "API 密钥请放在 .env 里，不要提交",
    "токен лежит в секретах GitHub Actions",
    "Der API-Schlüssel wird über die Umgebungsvariable gesetzt",
    "La clé API est dans le coffre",
    "el token caduca en una hora",
    "il token scade dopo 24 ore",
    "o token fica no cofre",
    f"lockfile integrity sha512-{_pick(_ALNUM + '+/', 86)}==",
    f"the build cache key is linux-node20-{_SHA1[4][:16]}",
    "the api_key parameter is optional for public endpoints",
]

NEAR_MISSES: list[tuple[str, str]] = [
    *(("url", t) for t in _URL_NEAR),
    *(("password-prose", t) for t in _PASSWORD_PROSE_NEAR),
    *(("pass-short", t) for t in _PASS_SHORT_NEAR),
    *(("basic-auth", t) for t in _BASIC_AUTH_NEAR),
    *(("user-pair", t) for t in _USER_PAIR_NEAR),
    *(("token", t) for t in _TOKEN_NEAR),
]
"""``(shape, text)``: looks like the shape, holds no secret."""

SHAPES = ("url", "password-prose", "pass-short", "basic-auth", "user-pair", "token")

for _shape, _text, _value in SECRETS:
    assert _text.count(_value) == 1, (_shape, _text, _value)

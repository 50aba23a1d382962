// A real SMTP server for the browser tests (nodemailer's smtp-server): accepts every mail and
// writes it to the directory given as argument, one .eml per mail in arrival order, so a test
// can read exactly what Bulwark sent. Plain SMTP on 127.0.0.1 only.
import fs from "node:fs";
import { SMTPServer } from "smtp-server";

const port = Number(process.env.BULWARK_E2E_SMTP_PORT ?? 3125);
const dir = process.argv[2] ?? ".run/mail";
fs.mkdirSync(dir, { recursive: true });
let received = 0;

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, _session, callback) {
    const chunks = [];
    stream.on("data", (chunk) => chunks.push(chunk));
    stream.on("end", () => {
      received += 1;
      fs.writeFileSync(`${dir}/${String(received).padStart(4, "0")}.eml`, Buffer.concat(chunks));
      callback(null, `queued as e2e-${received}`);
    });
  },
});
server.listen(port, "127.0.0.1");

// Leave with the server that started us (start-server.sh execs into bulwark, our parent).
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();

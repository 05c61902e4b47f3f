//! `store get`, `ls` and `rm`.

use super::ids::{parts_of, resolve_id, Part};
use super::{close, list_paths, open_front, stream_name, with_paths, GetArgs, LsArgs, OutputArg, RmArgs};
use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;

/// Bytes per read of `get`.
const PIECE: usize = 1 << 20;

pub(super) fn get(a: GetArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, true)?;
    let id = resolve_id(&front, &a.id, &paths)?;
    let (_, c) = front.chunk(id).ok_or_else(|| anyhow!("no chunk {id} in {}", list_paths(&paths)))?;
    // A file stored in parts is its parts, joined.
    let pieces: Vec<Part> = match parts_of(&mut front, id, &paths)? {
        Some(parts) => {
            for (p, n) in &parts {
                match front.chunk(*p) {
                    Some((_, pc)) if pc.len == *n => {}
                    Some((_, pc)) => {
                        bail!("part {p} of chunk {id} holds {} bytes, the manifest says {n}", pc.len)
                    }
                    None => bail!("part {p} of chunk {id} is missing from {}", list_paths(&paths)),
                }
            }
            parts
        }
        None => vec![(id, c.len)],
    };
    // `-o FILE` through the one output writer (atomic for a file, written through for a
    // device or FIFO); errors name it
    let mut file = match &a.out {
        Some(p) => Some(shingled_core::output::Output::create(p).map_err(|e| anyhow::anyhow!("-o {e}"))?),
        None => None,
    };
    let what = match &a.out {
        Some(p) => format!("writing {}", p.display()),
        None => "writing the chunk's bytes to standard output".to_string(),
    };
    {
        let mut out: Box<dyn Write + '_> = match file.as_mut() {
            Some(f) => Box::new(std::io::BufWriter::new(f)),
            None => Box::new(std::io::stdout().lock()),
        };
        for (part, len) in pieces {
            let mut pos = 0;
            while pos < len {
                let n = (len - pos).min(PIECE as u64);
                let v = front.read(part, pos, n).map_err(|e| with_paths(e, &paths))?;
                out.write_all(&v).with_context(|| what.clone())?;
                pos += n;
            }
        }
        out.flush().with_context(|| what.clone())?;
    }
    if let Some(f) = file {
        f.commit().map_err(|e| anyhow::anyhow!("writing {e}"))?;
    }
    Ok(())
}

pub(super) fn ls(a: LsArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (front, _) = open_front(&a.devices, true)?;
    let l = front.list();
    if a.output == OutputArg::Json {
        let v: Vec<serde_json::Value> = l
            .iter()
            .map(|(d, c)| {
                // The chunk's serde form, its stream type by name, and where it is.
                let mut j = serde_json::to_value(c)?;
                j["stream"] = stream_name(c.stream).into();
                j["drive"] = (*d).into();
                j["device"] = serde_json::to_value(&paths[*d])?;
                Ok(j)
            })
            .collect::<Result<_>>()?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let multi = paths.len() > 1;
    println!(
        "{:<48}  {:<8}  {:>12}  {:<6}  {:>7}{}",
        "id",
        "stream",
        "length",
        "sealed",
        "records",
        if multi { "  drive" } else { "" }
    );
    for (d, c) in &l {
        println!(
            "{:<48}  {:<8}  {:>12}  {:<6}  {:>7}{}",
            c.id.to_string(),
            stream_name(c.stream),
            c.len,
            if c.sealed { "yes" } else { "no" },
            c.records,
            if multi { format!("  {d}") } else { String::new() }
        );
    }
    Ok(())
}

pub(super) fn rm(a: RmArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    let ids = a.ids.iter().map(|s| resolve_id(&front, s, &paths)).collect::<Result<Vec<_>>>()?;
    for id in &ids {
        if front.chunk(*id).is_none() {
            bail!("no chunk {id} in {}", list_paths(&paths));
        }
    }
    for id in &ids {
        // A file stored in parts goes whole: its parts first, then the manifest.
        let parts = parts_of(&mut front, *id, &paths)?;
        if let Some(parts) = &parts {
            for (p, _) in parts {
                if front.chunk(*p).is_some() {
                    front.delete(*p).map_err(|e| with_paths(e, &paths))?;
                }
            }
        }
        front.delete(*id).map_err(|e| with_paths(e, &paths))?;
        // Said only once it is durable: a crash after the line cannot bring the chunk back.
        front.sync().map_err(|e| with_paths(e, &paths))?;
        match parts {
            Some(parts) => println!("deleted {id} and its {} parts", parts.len()),
            None => println!("deleted {id}"),
        }
    }
    close(&mut front, &paths)
}

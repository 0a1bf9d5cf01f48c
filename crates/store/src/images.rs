//! Pictures sent to models, each stored once under the SHA-256 of its bytes (see
//! version 16 in `migrations.rs`). A stored request names its pictures (`llm::Image` serialises as a
//! reference); these methods keep the bytes and give them back to a resumed game and the report.

use base64::Engine as _;

use super::db::{OptionalExtension, params};
use super::{Context, Store, StoreError, bad_column};
use crate::llm::{ChatMessage, Image, sha256_hex};

impl Store {
    /// Stores the pictures of `messages` that the store does not hold yet. Content-addressed rows
    /// never change, so a picture stored twice (two games racing, a replay) is stored once.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn put_images(&self, messages: &[ChatMessage]) -> Result<(), StoreError> {
        let conn = self.conn();
        for image in messages.iter().flat_map(|m| &m.images) {
            let data = base64::engine::general_purpose::STANDARD.encode(&image.data);
            conn.prepare_cached(
                "INSERT INTO images (sha256, media_type, data_base64) VALUES (?1, ?2, ?3)
                 ON CONFLICT (sha256) DO NOTHING",
            )
            .and_then(|mut stmt| stmt.execute(params![image.sha256, image.media_type, data]))
            .context(|| format!("store the image `{}`", image.sha256))?;
        }
        Ok(())
    }

    /// The picture stored under `sha256`, if any.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or a row whose bytes are not base64 or do
    /// not hash to its key.
    pub fn image(&self, sha256: &str) -> Result<Option<Image>, StoreError> {
        let row: Option<(String, String)> = self
            .conn()
            .prepare_cached("SELECT media_type, data_base64 FROM images WHERE sha256 = ?1")
            .and_then(|mut stmt| {
                stmt.query_row(params![sha256], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .context(|| format!("read the image `{sha256}`"))?;
        let Some((media_type, data)) = row else {
            return Ok(None);
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()
            .filter(|bytes| sha256_hex(bytes) == sha256)
            .ok_or_else(|| bad_column(1, "the bytes do not hash to the image's key".into()))
            .context(|| format!("read the image `{sha256}`"))?;
        Ok(Some(Image::new(media_type, bytes)))
    }

    /// Fills in the bytes of every picture of `messages` read back from a stored request.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] for a picture the store does not hold, else as
    /// [`Store::image`].
    pub fn resolve_images(&self, messages: &mut [ChatMessage]) -> Result<(), StoreError> {
        for image in messages.iter_mut().flat_map(|m| &mut m.images) {
            if image.is_resolved() {
                continue;
            }
            *image = self
                .image(&image.sha256)?
                .ok_or_else(|| StoreError::NotFound {
                    what: format!("the image `{}` a stored request shows", image.sha256),
                })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_stored_once_and_resolved_by_their_hash() {
        let store = Store::open_in_memory().unwrap();
        let picture = Image::new("image/png", vec![0x89, b'P', b'N', b'G', 0, 1, 2]);
        let shown = vec![
            ChatMessage::new("user", "a").with_image(picture.clone()),
            ChatMessage::new("user", "b").with_image(picture.clone()),
        ];
        store.put_images(&shown).unwrap();
        store.put_images(&shown).unwrap();
        let rows: i64 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM images", params![], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1);

        // As a resumed game reads them: references, then the bytes from the store.
        let mut read: Vec<ChatMessage> =
            serde_json::from_str(&serde_json::to_string(&shown).unwrap()).unwrap();
        assert!(!read[0].images[0].is_resolved());
        store.resolve_images(&mut read).unwrap();
        assert_eq!(read, shown);

        let mut unknown =
            vec![ChatMessage::new("user", "c").with_image(Image::new("image/png", vec![7]))];
        unknown[0].images[0].data = Vec::new().into();
        let err = store.resolve_images(&mut unknown).unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    }
}

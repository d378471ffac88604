//! [`ListPages`]: `list` a page at a time instead of one `Vec` of everything.

use super::error::SaverFault;
use super::traits::{CheckpointSaver, ListOptions};
use super::types::{CheckpointConfig, CheckpointTuple};
use crate::saver::Result;

/// Pages through the checkpoints of one namespace of one thread, newest first: each
/// [`next_page`](Self::next_page) is one `list` call with a `limit` of the page size and
/// a `before` cursor at the last id it returned, so memory holds one page and a page
/// costs what a `list` of that size costs. Works with any [`CheckpointSaver`].
///
/// Checkpoint ids are unique and ordered within one namespace, which makes the cursor
/// exact; across namespaces or threads savers order differently (and `copy_thread`
/// repeats ids), so a config without a namespace is refused: use `list` there.
///
/// ```
/// use langgraph_codec::saver::{
///     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver,
///     ListOptions, ListPages,
/// };
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let saver = InMemorySaver::new();
/// let mut config = CheckpointConfig::new("t");
/// for step in 0..5 {
///     let md = CheckpointMetadata::new("loop", step);
///     config = saver.put(&config, &Checkpoint::now(step), &md, &Default::default()).await?;
/// }
/// let mut pages = ListPages::new(&saver, CheckpointConfig::new("t"), ListOptions::new(), 2)?;
/// let mut sizes = Vec::new();
/// while let Some(page) = pages.next_page().await? {
///     sizes.push(page.len());
/// }
/// assert_eq!(sizes, [2, 2, 1]);
/// # Ok::<(), langgraph_codec::Error>(())
/// # }).unwrap();
/// ```
pub struct ListPages<'a> {
    saver: &'a dyn CheckpointSaver,
    config: CheckpointConfig,
    options: ListOptions,
    page_size: usize,
    /// What is left of `options.limit`.
    remaining: Option<usize>,
    done: bool,
}

impl std::fmt::Debug for ListPages<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListPages")
            .field("config", &self.config)
            .field("options", &self.options)
            .field("page_size", &self.page_size)
            .field("remaining", &self.remaining)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<'a> ListPages<'a> {
    /// Pages of at most `page_size` checkpoints of `config`'s thread and namespace that
    /// match `options` (its `filter`, `before` and `limit` apply to the whole listing).
    ///
    /// # Errors
    /// [`ErrorKind::MissingThreadId`](crate::ErrorKind::MissingThreadId) without a thread,
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) without a namespace or with a zero page size.
    pub fn new(
        saver: &'a dyn CheckpointSaver,
        config: CheckpointConfig,
        options: ListOptions,
        page_size: usize,
    ) -> Result<Self> {
        config.require_thread_id("list")?;
        if config.checkpoint_ns.is_none() {
            return Err(SaverFault::InvalidConfig {
                reason:
                    "ListPages pages through one namespace: set checkpoint_ns (\"\" for the root)"
                        .to_owned(),
            }
            .into());
        }
        if page_size == 0 {
            return Err(SaverFault::InvalidConfig {
                reason: "a page size of 0".to_owned(),
            }
            .into());
        }
        Ok(ListPages {
            saver,
            remaining: options.limit,
            config,
            options,
            page_size,
            done: false,
        })
    }

    /// The next page, newest first; `None` once everything was returned.
    ///
    /// # Errors
    /// What the saver's `list` returns.
    pub async fn next_page(&mut self) -> Result<Option<Vec<CheckpointTuple>>> {
        if self.done {
            return Ok(None);
        }
        let want = self
            .remaining
            .map_or(self.page_size, |r| r.min(self.page_size));
        if want == 0 {
            self.done = true;
            return Ok(None);
        }
        let mut options = self.options.clone();
        options.limit = Some(want);
        let page = self.saver.list(Some(&self.config), &options).await?;
        if page.len() < want {
            self.done = true;
        }
        if let Some(r) = self.remaining.as_mut() {
            *r = r.saturating_sub(page.len());
        }
        match page.last().and_then(|t| t.config.checkpoint_id.clone()) {
            Some(last) => {
                self.options.before = Some(self.config.clone().with_checkpoint_id(last));
            }
            None => self.done = true,
        }
        Ok((!page.is_empty()).then_some(page))
    }
}

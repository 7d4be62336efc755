-- The search index is written again with the words both databases split alike
-- (search._folded: diacritics gone, punctuation a space): emptied here, it is filled at
-- start by search.index_missing, as for a database from before search existed.
DELETE FROM topic_search;

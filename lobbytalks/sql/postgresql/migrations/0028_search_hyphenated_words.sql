-- The search index is written again with hyphenated words also as one word
-- (search._latin_terms: "Wi-Fi" is "wi fi wifi"), so that "wifi" finds "Wi-Fi": emptied
-- here, it is filled at start by search.index_missing, as 0022 did.
DELETE FROM topic_search;
